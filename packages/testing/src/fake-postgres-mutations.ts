/**
 * A seeded engine that turns a well-formed server answer into a broken one: wrong lengths, wrong
 * types, truncation, garbage, reordering, field counts that disagree, messages out of turn,
 * silence and closed connections. Deterministic for a given seed; no dependency.
 */
import {
  backend,
  encode,
  frame,
  frameWithLength,
  type BackendMessage,
} from './fake-postgres-protocol';

/** A small seeded pseudo-random source. */
export interface Random {
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  bytes(count: number): Buffer;
}

/** mulberry32: a tiny 32-bit PRNG, good enough to choose mutations reproducibly. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A {@link Random} over {@link mulberry32}. */
export function createRandom(seed: number): Random {
  const next = mulberry32(seed);
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    chance: (probability) => next() < probability,
    bytes: (count) => Buffer.from(Array.from({ length: count }, () => Math.floor(next() * 256))),
  };
  return random;
}

/** FNV-1a over the parts: derives a seed from a run's seed and what identifies one round trip. */
export function seedFrom(...parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    const text = `${String(part)}\u0001`;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
  }
  return hash >>> 0;
}

/** What the fake server does after writing a reply. */
export type AfterReply =
  /** Keeps reading and answering the client. */
  | 'serve'
  /** Closes its side (FIN) once the bytes are written. */
  | 'end'
  /** Resets the connection at once. */
  | 'destroy'
  /** Ignores the client from now on; the socket stays open until the client or close() ends it. */
  | 'hang';

/** A fake server's answer to one round trip (or to the startup message). */
export interface Reply {
  /** Written in order, one write each. */
  chunks: Buffer[];
  then?: AfterReply;
  /** What was done, for failure reports. */
  label?: string;
  /**
   * The bytes break the protocol (malformed, truncated or a message out of turn): a client that
   * fails this request because of them must call it a protocol error.
   */
  malformed?: boolean;
}

/** A reply that sends `messages` as they are. */
export function replyWith(messages: readonly BackendMessage[], then: AfterReply = 'serve'): Reply {
  return { chunks: [encode(messages)], then, label: 'well-formed' };
}

/** The names of the mutations {@link mutateAnswer} can apply. */
export const MUTATIONS = [
  'length-too-small',
  'length-too-small-at-end',
  'length-too-large',
  'length-negative',
  'length-max',
  'unknown-type',
  'swapped-type',
  'truncate-then-close',
  'truncate-then-hang',
  'random-bytes',
  'inserted-random-bytes',
  'duplicated-message',
  'reordered-messages',
  'dropped-message',
  'datarow-extra-field',
  'datarow-missing-field',
  'invalid-utf8',
  'field-length-minus-2',
  'field-length-huge',
  'error-missing-fields',
  'unexpected-message',
  'asynchronous-message',
  'bad-ready-status',
  'never-answer',
  'answer-then-close',
  'answer-then-reset',
  'close-mid-answer',
  'close-without-answer',
] as const;

export type MutationName = (typeof MUTATIONS)[number];

/** Relative weights of the mutations; a mutation left out (or 0) is never chosen. */
export type MutationWeights = Partial<Record<MutationName, number>>;

/** Backend type bytes pg-protocol knows; an unknown type is any other byte. */
const KNOWN_TYPES = new Set('123nsctIDCZARSKENTtGHdWV'.split(''));
/** Types a swapped message may take: never E or N, which would turn garbage into a server error. */
const SWAP_TYPES = ['1', '2', '3', 'n', 's', 'I', 'D', 'C', 'Z', 'T', 't', 'S', 'K', 'A', 'G', 'H'];
/** At most this many bytes follow a header that announces a huge message: memory stays bounded. */
const HUGE_TAIL_BYTES = 64;

const indexOfType = (answer: readonly BackendMessage[], type: string): number =>
  answer.findIndex((message) => message.type === type);

/** A message to corrupt: a DataRow when there is one (the reported crash), else any. */
function victimIndex(answer: readonly BackendMessage[], random: Random): number {
  const rows = answer.flatMap((message, index) => (message.type === 'D' ? [index] : []));
  if (rows.length > 0 && random.chance(0.7)) return random.pick(rows);
  return random.int(0, answer.length - 1);
}

const withLength = (
  answer: readonly BackendMessage[],
  index: number,
  length: number,
  tail?: Buffer,
): Buffer =>
  Buffer.concat(
    answer.map((message, at) =>
      at !== index
        ? frame(message)
        : tail
          ? Buffer.concat([frameWithLength({ ...message, body: Buffer.alloc(0) }, length), tail])
          : frameWithLength(message, length),
    ),
  );

/** Replaces the values of the DataRow at `index` (or of the first one) by `values`. */
function rewriteRow(
  answer: BackendMessage[],
  random: Random,
  rewrite: (values: (Buffer | null)[]) => (Buffer | string | null)[],
): BackendMessage[] | undefined {
  const rows = answer.flatMap((message, index) => (message.type === 'D' ? [index] : []));
  if (rows.length === 0) return undefined;
  const index = random.pick(rows);
  const values = readDataRow((answer[index] as BackendMessage).body);
  const copy = [...answer];
  copy[index] = backend.dataRow(rewrite(values));
  return copy;
}

function readDataRow(body: Buffer): (Buffer | null)[] {
  const count = body.readInt16BE(0);
  const values: (Buffer | null)[] = [];
  let offset = 2;
  for (let i = 0; i < count; i++) {
    const length = body.readInt32BE(offset);
    offset += 4;
    if (length < 0) {
      values.push(null);
      continue;
    }
    values.push(body.subarray(offset, offset + length));
    offset += length;
  }
  return values;
}

/** A DataRow whose single field announces `fieldLength` bytes, the message length being honest. */
function rowWithFieldLength(fieldLength: number, value: Buffer): BackendMessage {
  const body = Buffer.alloc(6);
  body.writeInt16BE(1, 0);
  body.writeInt32BE(fieldLength, 2);
  return { type: 'D', body: Buffer.concat([body, value]) };
}

const cutSomewhere = (bytes: Buffer, random: Random): Buffer =>
  bytes.subarray(0, random.int(1, Math.max(1, bytes.length - 1)));

const malformed = (chunks: Buffer[], label: string, then: AfterReply = 'serve'): Reply => ({
  chunks,
  label,
  then,
  malformed: true,
});

/** One mutation under several names. */
function sharedMutation<N extends MutationName>(
  names: readonly N[],
  mutation: Mutation,
): Record<N, Mutation> {
  return Object.fromEntries(names.map((name) => [name, mutation])) as Record<N, Mutation>;
}

/** What a mutation works on. */
interface MutationInput {
  name: MutationName;
  /** A copy of the answer's messages, which the mutation may change. */
  messages: BackendMessage[];
  /** The answer, encoded. */
  whole: Buffer;
  /** The answer as given, for a mutation that falls back to another. */
  answer: readonly BackendMessage[];
  random: Random;
}

type Mutation = (input: MutationInput) => Reply;

/** Lengths that disagree with the bytes that follow them. */
const LENGTH_MUTATIONS = {
  'length-too-small': ({ name, messages, random }) => {
    const index = victimIndex(messages, random);
    const length = random.int(0, 3);
    return malformed(
      [withLength(messages, index, length)],
      `${name}: ${messages[index]?.type} length ${length}`,
    );
  },
  'length-too-small-at-end': ({ name, messages, random }) => {
    // The reported crash: a DataRow announcing 2 bytes as the last thing in the stream.
    const index = victimIndex(messages, random);
    const length = random.int(0, 3);
    const head = encode(messages.slice(0, index));
    const victim = frameWithLength({ ...(messages[index] as BackendMessage) }, length);
    return malformed(
      [Buffer.concat([head, victim.subarray(0, 5 + random.int(0, 2))])],
      `${name}: ${messages[index]?.type} length ${length}`,
      'hang',
    );
  },
  'length-too-large': ({ name, messages, random }) => {
    const index = victimIndex(messages, random);
    const message = messages[index] as BackendMessage;
    const extra = random.int(1, 64);
    return malformed(
      [withLength(messages, index, message.body.length + 4 + extra)],
      `${name}: ${message.type} length +${extra}`,
    );
  },
  'length-negative': ({ name, messages, random }) => {
    const index = victimIndex(messages, random);
    const length = -random.int(1, 1000);
    return malformed(
      [withLength(messages, index, length, random.bytes(random.int(0, HUGE_TAIL_BYTES)))],
      `${name}: ${messages[index]?.type} length ${length}`,
    );
  },
  'length-max': ({ name, messages, random }) => {
    const index = victimIndex(messages, random);
    return malformed(
      [withLength(messages, index, 0x7fffffff, random.bytes(random.int(0, HUGE_TAIL_BYTES)))],
      `${name}: ${messages[index]?.type} length 0x7fffffff`,
    );
  },
} satisfies Partial<Record<MutationName, Mutation>>;

/** Messages of the wrong type, or in the wrong number or order. */
const MESSAGE_MUTATIONS = {
  'unknown-type': ({ name, messages, random }) => {
    const index = victimIndex(messages, random);
    let type: string;
    do type = String.fromCharCode(random.int(0, 255));
    while (KNOWN_TYPES.has(type));
    messages[index] = { ...(messages[index] as BackendMessage), type };
    return malformed(
      [encode(messages)],
      `${name}: message ${index} type 0x${type.charCodeAt(0).toString(16)}`,
    );
  },
  'swapped-type': ({ name, messages, random }) => {
    const index = victimIndex(messages, random);
    const from = (messages[index] as BackendMessage).type;
    const type = random.pick(SWAP_TYPES.filter((each) => each !== from));
    messages[index] = { ...(messages[index] as BackendMessage), type };
    return malformed([encode(messages)], `${name}: message ${index} ${from} -> ${type}`);
  },
  'inserted-random-bytes': ({ name, messages, random }) => {
    const at = random.int(0, messages.length);
    return malformed(
      [
        Buffer.concat([
          encode(messages.slice(0, at)),
          random.bytes(random.int(1, 32)),
          encode(messages.slice(at)),
        ]),
      ],
      `${name}: at message ${at}`,
    );
  },
  'duplicated-message': ({ name, messages, random }) => {
    const index = random.int(0, messages.length - 1);
    messages.splice(index, 0, messages[index] as BackendMessage);
    return malformed([encode(messages)], `${name}: ${messages[index]?.type} at ${index}`);
  },
  'reordered-messages': ({ name, messages, random }) => {
    if (messages.length < 2) return malformed([random.bytes(8)], `${name}: too short, garbage`);
    const index = random.int(0, messages.length - 2);
    const [first, second] = [messages[index], messages[index + 1]] as BackendMessage[];
    messages[index] = second as BackendMessage;
    messages[index + 1] = first as BackendMessage;
    return malformed([encode(messages)], `${name}: ${first?.type}<->${second?.type}`);
  },
  'dropped-message': ({ name, messages, random }) => {
    const index = random.int(0, messages.length - 1);
    const [dropped] = messages.splice(index, 1);
    return malformed([encode(messages)], `${name}: ${dropped?.type} at ${index}`);
  },
  'unexpected-message': ({ name, messages, random }) => {
    const intruder = random.pick([
      backend.authenticationRequest(3),
      backend.authenticationRequest(5),
      backend.authenticationRequest(10),
      backend.authenticationOk(),
      backend.backendKeyData(random.int(1, 99999), random.int(1, 99999)),
      backend.copyInResponse(1),
      backend.copyOutResponse(1),
      backend.parameterDescription([25]),
      backend.emptyQueryResponse(),
    ]);
    const at = random.int(0, messages.length - 1);
    messages.splice(at, 0, intruder);
    return malformed([encode(messages)], `${name}: ${intruder.type} at ${at}`);
  },
  'asynchronous-message': ({ name, messages, random }) => {
    // The protocol allows these at any time: a client must take them in its stride.
    const intruder = random.pick([
      backend.parameterStatus('application_name', 'changed'),
      backend.parameterStatus('TimeZone', 'UTC'),
      backend.notificationResponse(random.int(1, 99999), 'channel', 'payload'),
      backend.noticeResponse({ S: 'NOTICE', V: 'NOTICE', C: '00000', M: 'a notice' }),
    ]);
    const at = random.int(0, messages.length - 1);
    messages.splice(at, 0, intruder);
    return { chunks: [encode(messages)], then: 'serve', label: `${name}: ${intruder.type}` };
  },
  'bad-ready-status': ({ name, messages, answer, random }) => {
    const index = indexOfType(messages, 'Z');
    if (index < 0) return mutateAnswer('random-bytes', answer, random);
    messages[index] = backend.readyForQuery(random.pick(['X', '\0', '?']));
    return malformed([encode(messages)], name);
  },
} satisfies Partial<Record<MutationName, Mutation>>;

/** Rows and errors whose content a real server never sends. */
const CONTENT_MUTATIONS = {
  'datarow-extra-field': ({ name, messages, answer, random }) => {
    const changed = rewriteRow(messages, random, (values) => [...values, 'extra']);
    if (!changed) return mutateAnswer('unknown-type', answer, random);
    return malformed([encode(changed)], name);
  },
  'datarow-missing-field': ({ name, messages, answer, random }) => {
    const changed = rewriteRow(messages, random, (values) => values.slice(0, -1));
    if (!changed) return mutateAnswer('unknown-type', answer, random);
    return malformed([encode(changed)], name);
  },
  'invalid-utf8': ({ name, messages, random }) => {
    // Not a protocol violation a client can see: the value simply is not UTF-8.
    const changed = rewriteRow(messages, random, (values) =>
      values.map(() => Buffer.from([0x61, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80])),
    );
    return {
      chunks: [encode(changed ?? messages)],
      then: 'serve',
      label: changed ? name : `${name}: no row`,
    };
  },
  ...sharedMutation(['field-length-minus-2', 'field-length-huge'], ({ name, messages, random }) => {
    const index = indexOfType(messages, 'D');
    const row =
      name === 'field-length-minus-2'
        ? rowWithFieldLength(-2, Buffer.from('ab'))
        : rowWithFieldLength(0x7ffffff0, random.bytes(random.int(0, HUGE_TAIL_BYTES)));
    if (index < 0) {
      const described = indexOfType(messages, 'T');
      if (described < 0) return malformed([encode([row, ...messages])], `${name}: no row`);
      messages.splice(described + 1, 0, row);
    } else {
      messages[index] = row;
    }
    return malformed([encode(messages)], name);
  }),
  'error-missing-fields': ({ name, messages, random }) => {
    const all: Record<string, string> = {
      S: 'ERROR',
      V: 'ERROR',
      C: '42601',
      M: 'syntax error',
    };
    // Drop at least the code or the message: a real server always sends both.
    const keep = Object.entries(all).filter(
      ([code]) => !(code === 'C' || code === 'M') || random.chance(0.3),
    );
    const fields = Object.fromEntries(
      keep.length === 4 ? keep.filter(([code]) => code !== 'C') : keep,
    );
    const end = indexOfType(messages, 'Z');
    const status = end >= 0 ? messages[end] : backend.readyForQuery('I');
    return malformed(
      [encode([backend.errorResponse(fields), status as BackendMessage])],
      `${name}: ${Object.keys(fields).join('') || 'none'}`,
    );
  },
} satisfies Partial<Record<MutationName, Mutation>>;

/** Answers cut, replaced by garbage, never sent, or followed by the connection ending. */
const STREAM_MUTATIONS = {
  'truncate-then-close': ({ name, whole, random }) => {
    return { chunks: [cutSomewhere(whole, random)], then: 'end', label: name };
  },
  'truncate-then-hang': ({ name, whole, random }) => {
    return malformed([cutSomewhere(whole, random)], name, 'hang');
  },
  'random-bytes': ({ name, random }) => {
    return malformed([random.bytes(random.int(1, 512))], name);
  },
  'never-answer': ({ name }) => {
    return { chunks: [], then: 'hang', label: name };
  },
  'answer-then-close': ({ name, whole }) => {
    return { chunks: [whole], then: 'end', label: name };
  },
  'answer-then-reset': ({ name, whole }) => {
    return { chunks: [whole], then: 'destroy', label: name };
  },
  'close-mid-answer': ({ name, messages, random }) => {
    const at = random.int(0, Math.max(0, messages.length - 1));
    return {
      chunks: [encode(messages.slice(0, at))],
      then: random.chance(0.5) ? 'end' : 'destroy',
      label: `${name}: after ${at} messages`,
    };
  },
  'close-without-answer': ({ name, random }) => {
    return { chunks: [], then: random.chance(0.5) ? 'end' : 'destroy', label: name };
  },
} satisfies Partial<Record<MutationName, Mutation>>;

const MUTATIONS_BY_NAME: Record<MutationName, Mutation> = {
  ...LENGTH_MUTATIONS,
  ...MESSAGE_MUTATIONS,
  ...CONTENT_MUTATIONS,
  ...STREAM_MUTATIONS,
};

/**
 * Applies the mutation `name` to a well-formed answer. Every mutation answers something, even
 * when the answer has nothing it could corrupt (then it falls back to garbage bytes).
 */
export function mutateAnswer(
  name: MutationName,
  answer: readonly BackendMessage[],
  random: Random,
): Reply {
  const messages = [...answer];
  const whole = encode(messages);
  if (messages.length === 0 && !name.startsWith('never') && !name.startsWith('close-without')) {
    return malformed([random.bytes(random.int(1, 64))], `${name}: nothing to mutate, random bytes`);
  }
  return MUTATIONS_BY_NAME[name]({ name, messages, whole, answer, random });
}

/** Chooses a mutation by weight. */
export function chooseMutation(weights: MutationWeights, random: Random): MutationName {
  const entries = MUTATIONS.map((name) => [name, weights[name] ?? 0] as const).filter(
    ([, weight]) => weight > 0,
  );
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
  if (total <= 0) throw new Error('no mutation has a positive weight');
  let point = random.next() * total;
  for (const [name, weight] of entries) {
    point -= weight;
    if (point < 0) return name;
  }
  return (entries[entries.length - 1] as readonly [MutationName, number])[0];
}

/** Every mutation with weight 1. */
export const EVEN_WEIGHTS: MutationWeights = Object.fromEntries(
  MUTATIONS.map((name) => [name, 1]),
) as MutationWeights;
