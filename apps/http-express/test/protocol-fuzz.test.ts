/**
 * A hostile PostgreSQL cannot end sqlgate (docs/decisions.md 10.1): a malformed, truncated or
 * unexpected server message ends that connection only and answers that request 502
 * PROTOCOL_ERROR; a server that says nothing is given up after timeoutMs + 2 s (10.6).
 *
 * sqlgate runs as a child process (the built bin), so that a crash is an exited process with its
 * stack trace, not a dead Jest worker. The fake server (@sqlgate/testing) answers with faults:
 * scripted ones for the known cases, then seeded random mutations for a few thousand requests.
 * FUZZ_SEED overrides the seed, FUZZ_REQUESTS the number of requests.
 */
import {
  backend,
  chooseMutation,
  createRandom,
  encode,
  eventually,
  mutateAnswer,
  mutatingBehaviour,
  replyWith,
  seedFrom,
  startFakePostgres,
  type BackendMessage,
  type FakePostgres,
  type MutationWeights,
  type Reply,
  type RoundTrip,
} from '@sqlgate/testing';
import { startSqlgateProcess, type Outcome, type SqlgateProcess } from './sqlgate-process';
import { target } from './support';

const DEFAULT_SEED = 20261123;
/** A whole number from the environment, or the default; anything else is a mistake worth saying. */
function integerFromEnvironment(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a whole number, not ${JSON.stringify(text)}`);
  }
  return value;
}

const SEED = integerFromEnvironment('FUZZ_SEED', DEFAULT_SEED);
const REQUESTS = integerFromEnvironment('FUZZ_REQUESTS', 2000);
/** A request the server leaves waiting holds a worker for 2 s and more: 16 keep the rest moving. */
const CONCURRENCY = 16;
/** Every fuzz request carries it: a server that goes silent then costs timeoutMs + 2 s (10.6). */
const FUZZ_TIMEOUT_MS = 250;
/**
 * 10.6's 2 s, plus a connect or a pool wait before it and ample room for a loaded machine: only a
 * request that hangs reaches it.
 */
const GIVE_UP_MS = (timeoutMs: number) => timeoutMs + 2_000 + 30_000;
const MAX_RSS_BYTES = 400 * 1024 * 1024;
const ALLOWED_STATUSES = new Set([200, 400, 502, 503, 504]);
const PROTOCOL_ERROR = 'PROTOCOL_ERROR';

/** Environment of the child: quiet, and quick to give up on a server that never finishes a login. */
const CHILD_ENV = {
  // info: the child announces where it listens at that level (see sqlgate-process.ts).
  LOG_LEVEL: 'info',
  CONNECT_TIMEOUT_MS: '2000',
  POOL_MAX: '20',
  POOL_WAIT_TIMEOUT_MS: '1000',
};

function fakeTarget(fake: FakePostgres, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    host: fake.host,
    port: fake.port,
    user: 'fuzz',
    password: 'fuzz',
    database: 'fuzz',
    sslMode: 'disable',
    ...fields,
  };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/**
 * The code of an error body, when it has one: `error.code` for one statement; for several, the
 * code of the failure's `cause` (a transaction's, or the failed statement's in `results`).
 */
function errorCodeOf(body: unknown): unknown {
  if (!isObject(body)) return undefined;
  if (isObject(body.error)) return body.error.code;
  if (isObject(body.cause)) return body.cause.code;
  const { results, failedStatementIndex } = body;
  if (Array.isArray(results) && typeof failedStatementIndex === 'number') {
    const failed: unknown = results[failedStatementIndex];
    if (isObject(failed) && isObject(failed.cause)) return failed.cause.code;
  }
  return undefined;
}

function describeOutcome(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'response':
      return `${outcome.status} ${JSON.stringify(outcome.body).slice(0, 300)} after ${outcome.ms} ms`;
    case 'not-json':
      return `${outcome.status} with a body that is not JSON: ${outcome.text}`;
    case 'transport-error':
      return `no HTTP response: ${outcome.message} after ${outcome.ms} ms`;
    case 'no-answer':
      return `no answer within ${outcome.ms} ms`;
  }
}

/**
 * Fails with the child's own output when it died: the crash is the news, not the symptom. After
 * a request without an HTTP response, waits a moment: the socket of a dying child closes first.
 */
async function expectAlive(
  sqlgate: SqlgateProcess,
  during: string,
  outcome?: Outcome,
): Promise<void> {
  if (outcome && outcome.kind !== 'response') await sqlgate.settle(1000);
  if (!sqlgate.alive()) {
    throw new Error(`sqlgate ${sqlgate.exit()} ${during}.\n${sqlgate.output()}`);
  }
}

describe('a hostile server, case by case', () => {
  const CASES: Record<string, (answer: readonly BackendMessage[]) => Reply> = {
    // The reported crash: RowDescription, then a DataRow header announcing 2 bytes, then nothing.
    'datarow-length-2': (answer) => {
      const row = answer.findIndex((message) => message.type === 'D');
      const head = encode(answer.slice(0, row));
      return { chunks: [Buffer.concat([head, Buffer.from([0x44, 0, 0, 0, 2])])], then: 'hang' };
    },
    'datarow-extra-field': (answer) =>
      replyWith(
        answer.map((message) =>
          message.type === 'D' ? backend.dataRow(['datarow-extra-field', 'extra']) : message,
        ),
      ),
    'says-nothing': () => ({ chunks: [], then: 'hang' }),
    'closes-mid-answer': (answer) => {
      const row = answer.findIndex((message) => message.type === 'D');
      return { chunks: [encode(answer.slice(0, row + 1))], then: 'end' };
    },
    // A field announcing more bytes than its DataRow holds: what follows is other messages.
    'field-longer-than-message': (answer) => replyWith(withField(answer, 1_000_000, 'abc')),
    // -1 is NULL; no other negative length exists.
    'field-length-minus-2': (answer) => replyWith(withField(answer, -2, '')),
  };

  /** The answer with each DataRow replaced by one field of `length` followed by `bytes`. */
  function withField(
    answer: readonly BackendMessage[],
    length: number,
    bytes: string,
  ): BackendMessage[] {
    const body = Buffer.alloc(6);
    body.writeInt16BE(1, 0);
    body.writeInt32BE(length, 2);
    const row = { type: 'D', body: Buffer.concat([body, Buffer.from(bytes)]) };
    return answer.map((message) => (message.type === 'D' ? row : message));
  }

  /** The case named in the round trip's SQL; every other round trip is answered well. */
  const scripted = (trip: RoundTrip): Reply => {
    const name = Object.keys(CASES).find((each) => trip.texts.some((text) => text.includes(each)));
    return name ? (CASES[name] as (typeof CASES)[string])(trip.answer) : replyWith(trip.answer);
  };

  let fake: FakePostgres;
  let sqlgate: SqlgateProcess;
  beforeAll(async () => {
    fake = await startFakePostgres({ behaviour: scripted });
  });
  afterAll(() => fake?.close());
  // Starting a Node process takes seconds on a loaded machine.
  beforeEach(async () => {
    sqlgate = await startSqlgateProcess(CHILD_ENV);
  }, 30_000);
  afterEach(() => sqlgate?.stop(), 30_000);

  /** Only the faulty connection ended: the same target answers the next request. */
  async function expectNextRequestServed(): Promise<void> {
    await expectAlive(sqlgate, 'after the fault');
    const next = await sqlgate.post(
      '/api/query',
      fakeTarget(fake, { sql: "SELECT 'after' AS v", timeoutMs: 1000 }),
      GIVE_UP_MS(1000),
    );
    await expectAlive(sqlgate, 'on the request after the fault', next);
    expect(describeOutcome(next)).toMatch(/^200 /);
    expect(next).toMatchObject({ body: { rows: [{ v: 'after' }] } });
  }

  it('a DataRow whose length field says 2: 502 PROTOCOL_ERROR, other requests go on', async () => {
    // A request to the real database in flight at the same time must not notice.
    const bystander = sqlgate.post(
      '/api/query',
      target({ sql: 'SELECT pg_sleep(0.3), 1 AS one' }),
      10_000,
    );
    const outcome = await sqlgate.post(
      '/api/query',
      fakeTarget(fake, { sql: "SELECT 'datarow-length-2' AS v", timeoutMs: 1000 }),
      GIVE_UP_MS(1000),
    );
    await expectAlive(
      sqlgate,
      "on a DataRow whose length field says 2 (pg-protocol's RangeError)",
      outcome,
    );
    expect(describeOutcome(outcome)).toMatch(/^502 /);
    expect(errorCodeOf((outcome as { body: unknown }).body)).toBe(PROTOCOL_ERROR);
    const other = await bystander;
    expect(describeOutcome(other)).toMatch(/^200 /);
    expect(other).toMatchObject({ body: { rows: [{ one: 1 }] } });
    await expectNextRequestServed();
  }, 20_000);

  it('a DataRow with more fields than the RowDescription: 502 PROTOCOL_ERROR', async () => {
    const outcome = await sqlgate.post(
      '/api/query',
      fakeTarget(fake, { sql: "SELECT 'datarow-extra-field' AS v", timeoutMs: 1000 }),
      GIVE_UP_MS(1000),
    );
    await expectAlive(sqlgate, 'on a DataRow with more fields than the RowDescription', outcome);
    expect(describeOutcome(outcome)).toMatch(/^502 /);
    expect(errorCodeOf((outcome as { body: unknown }).body)).toBe(PROTOCOL_ERROR);
    await expectNextRequestServed();
  }, 20_000);

  it('a server that never answers the query: 504 at timeoutMs + 2 s (10.6)', async () => {
    const outcome = await sqlgate.post(
      '/api/query',
      fakeTarget(fake, { sql: "SELECT 'says-nothing' AS v", timeoutMs: 1000 }),
      GIVE_UP_MS(1000),
    );
    await expectAlive(sqlgate, 'on a server that never answers', outcome);
    // Answered (a hang is 'no-answer'), and not before timeoutMs + 2 s: a slower machine only
    // makes it later.
    expect(describeOutcome(outcome)).toMatch(/^504 /);
    expect(outcome.ms).toBeGreaterThanOrEqual(2900);
    expect(typeof errorCodeOf((outcome as { body: unknown }).body)).toBe('string');
    await expectNextRequestServed();
  }, 20_000);

  it.each([
    ['more bytes than its message holds', 'field-longer-than-message'],
    ['length -2', 'field-length-minus-2'],
  ])(
    'a DataRow field with %s: 502 PROTOCOL_ERROR, no made-up value',
    async (_, name) => {
      const outcome = await sqlgate.post(
        '/api/query',
        fakeTarget(fake, { sql: `SELECT '${name}' AS v`, timeoutMs: 1000 }),
        GIVE_UP_MS(1000),
      );
      await expectAlive(sqlgate, `on a DataRow field with ${name}`, outcome);
      expect(describeOutcome(outcome)).toMatch(/^502 /);
      expect(errorCodeOf((outcome as { body: unknown }).body)).toBe(PROTOCOL_ERROR);
      await expectNextRequestServed();
    },
    20_000,
  );

  it('a server that closes the connection mid-answer: 502 with a code', async () => {
    const outcome = await sqlgate.post(
      '/api/query',
      fakeTarget(fake, {
        sql: "SELECT 'closes-mid-answer' AS v FROM generate_series(1, 5)",
        timeoutMs: 1000,
      }),
      GIVE_UP_MS(1000),
    );
    await expectAlive(sqlgate, 'on a server that closes mid-answer', outcome);
    expect(describeOutcome(outcome)).toMatch(/^502 /);
    const code = errorCodeOf((outcome as { body: unknown }).body);
    expect(typeof code === 'string' && code !== '').toBe(true);
    await expectNextRequestServed();
  }, 20_000);
});

/** What the fake server did to the round trips of one request. */
interface Treatment {
  /** The fake server's number of the connection the round trip came on. */
  connection: number;
  label: string;
  malformed: boolean;
}

/** One fuzz request. */
interface FuzzRequest {
  body: Record<string, unknown>;
  /**
   * Its statements run on one connection, one round trip after another. Reads split over
   * several connections are not: one of them may fail for a reason no round trip of this request
   * records (a broken login), and that failure may be the one reported.
   */
  oneConnection: boolean;
}

/** A seeded request; a unique marker in every statement ties the round trips to it. */
function fuzzRequest(index: number, fake: FakePostgres): FuzzRequest {
  const random = createRandom(seedFrom(SEED, 'request', index));
  const marker = `fz${index}x`;
  const [sql, oneConnection] = random.pick<() => [string, boolean]>([
    () => [`SELECT '${marker}' AS v FROM generate_series(1, ${random.pick([1, 3, 40])})`, true],
    () => [`SELECT '${marker}' AS a; SELECT '${marker}' AS b`, false],
    () => [`INSERT INTO t VALUES ('${marker}')`, true],
    () => [`INSERT INTO t VALUES ('${marker}'); SELECT '${marker}' AS v`, true],
    () => [`BEGIN; SELECT '${marker}' AS v; COMMIT`, true],
    () => [`SELECT fake_error('42P01'), '${marker}' AS v`, true],
  ])();
  const fields: Record<string, unknown> = {
    // Several pools: what one broken connection does to its pool stays visible, not total.
    user: `fuzz${random.int(1, 8)}`,
    sql,
    sslMode: random.pick(['disable', 'prefer']),
    timeoutMs: FUZZ_TIMEOUT_MS,
  };
  if (random.chance(0.5)) fields.rowMode = random.pick(['object', 'array']);
  if (random.chance(0.5)) fields.maxRows = random.pick([1, 5, 100]);
  return { body: fakeTarget(fake, fields), oneConnection };
}

const MARKER = /fz(\d+)x/;

/**
 * Every mutation; the ones that mostly leave a client waiting for bytes that never come (each
 * costs timeoutMs + 2 s) rarer, so that a couple of thousand requests fit in the time budget.
 */
const FUZZ_WEIGHTS: MutationWeights = {
  'length-too-small': 1,
  'length-too-small-at-end': 4,
  'length-too-large': 1,
  'length-negative': 1,
  'length-max': 1,
  'unknown-type': 4,
  'swapped-type': 4,
  'truncate-then-close': 3,
  'truncate-then-hang': 1,
  'random-bytes': 1,
  'inserted-random-bytes': 1,
  'duplicated-message': 3,
  'reordered-messages': 3,
  'dropped-message': 2,
  'datarow-extra-field': 4,
  'datarow-missing-field': 4,
  'invalid-utf8': 3,
  'field-length-minus-2': 3,
  'field-length-huge': 3,
  'error-missing-fields': 3,
  'unexpected-message': 4,
  'asynchronous-message': 3,
  'bad-ready-status': 2,
  'never-answer': 1,
  'answer-then-close': 3,
  'answer-then-reset': 3,
  'close-mid-answer': 3,
  'close-without-answer': 2,
};

/**
 * Whether a 502 for this request can only be sqlgate noticing a broken message: its round trips
 * got broken messages, and the server closed none of their connections, in these round trips or
 * in any other (a COMMIT after them, say, which carries no marker).
 */
function onlyProtocolFaults(
  request: FuzzRequest,
  treatments: readonly Treatment[],
  closedByServer: ReadonlySet<number>,
): boolean {
  return (
    request.oneConnection &&
    treatments.some((each) => each.malformed) &&
    treatments.every(
      (each) =>
        !closedByServer.has(each.connection) && (each.label === 'well-formed' || each.malformed),
    )
  );
}

/** What is wrong with the outcome of one request, if anything. */
function problemWith(
  request: FuzzRequest,
  outcome: Outcome,
  treatments: readonly Treatment[],
  closedByServer: ReadonlySet<number>,
): string | undefined {
  if (outcome.kind !== 'response') return describeOutcome(outcome);
  const { status, body } = outcome;
  if (!ALLOWED_STATUSES.has(status)) return `status ${status}`;
  const code = errorCodeOf(body);
  if ((status === 502 || status === 504) && (typeof code !== 'string' || code === '')) {
    return `status ${status} without error.code`;
  }
  if (request.body.sslMode === 'prefer' && code === 'SSL_NOT_SUPPORTED') {
    // The fake server always refuses TLS: prefer must fall back to plain, every time (10.18).
    return `sslMode prefer answered ${status} SSL_NOT_SUPPORTED`;
  }
  if (
    status === 502 &&
    code !== PROTOCOL_ERROR &&
    onlyProtocolFaults(request, treatments, closedByServer)
  ) {
    return `502 ${String(code)} for a malformed answer on a connection the server kept open; expected ${PROTOCOL_ERROR}`;
  }
  return undefined;
}

describe('a hostile server, seeded fuzz', () => {
  it(`answers every request with JSON and a sane status, and never dies (seed ${SEED})`, async () => {
    const treatments = new Map<number, Treatment[]>();
    // The request's own statements get most faults; sqlgate's control statements (SET, BEGIN,
    // DISCARD ALL...) some, since a fault there must not do harm either.
    const own = (trip: RoundTrip) => trip.texts.some((text) => MARKER.test(text));
    const mutateOwn = mutatingBehaviour({ rate: 0.4, weights: FUZZ_WEIGHTS });
    const mutateControl = mutatingBehaviour({ rate: 0.1, weights: FUZZ_WEIGHTS });
    const mutate = (trip: RoundTrip) => (own(trip) ? mutateOwn(trip) : mutateControl(trip));
    const closedByServer = new Set<number>();
    const noteClose = (connection: number, reply: Reply): Reply => {
      if (reply.then === 'end' || reply.then === 'destroy') closedByServer.add(connection);
      return reply;
    };
    const fake = await startFakePostgres({
      seed: SEED,
      // A few logins are broken too: a fault while connecting must not do harm either.
      login: (login) =>
        noteClose(
          login.connection,
          login.random.chance(0.05)
            ? mutateAnswer(chooseMutation(FUZZ_WEIGHTS, login.random), login.answer, login.random)
            : replyWith(login.answer),
        ),
      behaviour: (trip) => {
        const reply = noteClose(trip.connection, mutate(trip));
        const index = trip.texts.map((text) => MARKER.exec(text)?.[1]).find(Boolean);
        if (index !== undefined) {
          const list = treatments.get(Number(index)) ?? [];
          list.push({
            connection: trip.connection,
            label: reply.label ?? 'unlabelled',
            malformed: reply.malformed === true,
          });
          treatments.set(Number(index), list);
        }
        return reply;
      },
    });
    const sqlgate = await startSqlgateProcess(CHILD_ENV);
    let maxRss = 0;
    const sampleRss = () => (maxRss = Math.max(maxRss, sqlgate.rssBytes() ?? 0));
    const sampler = setInterval(sampleRss, 200);
    const counts = new Map<string, number>();
    const failures: string[] = [];
    let failureCount = 0;
    let sent = 0;
    const started = Date.now();
    try {
      process.stdout.write(
        `protocol fuzz: seed ${SEED} (FUZZ_SEED to change), ${REQUESTS} requests\n`,
      );
      const worker = async (): Promise<void> => {
        while (sent < REQUESTS && sqlgate.alive()) {
          const index = sent++;
          const request = fuzzRequest(index, fake);
          const outcome = await sqlgate.post(
            '/api/query',
            request.body,
            GIVE_UP_MS(FUZZ_TIMEOUT_MS),
          );
          if (outcome.kind !== 'response') await sqlgate.settle(1000);
          if (!sqlgate.alive()) return;
          const key =
            outcome.kind === 'response'
              ? `${outcome.status}${errorCodeOf(outcome.body) ? `/${String(errorCodeOf(outcome.body))}` : ''}`
              : outcome.kind;
          counts.set(key, (counts.get(key) ?? 0) + 1);
          const problem = problemWith(
            request,
            outcome,
            treatments.get(index) ?? [],
            closedByServer,
          );
          if (problem) {
            failureCount++;
            if (failures.length < 25) {
              const done = (treatments.get(index) ?? []).map((each) => each.label).join(', ');
              failures.push(
                `#${index} ${problem} | sql ${String(request.body.sql)} | server: ${done || 'nothing'}`,
              );
            }
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      sampleRss();
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const summary = [...counts.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, count]) => `${key}:${count}`)
        .join(' ');
      process.stdout.write(
        `protocol fuzz: seed ${SEED}, ${sent} requests in ${seconds} s, max RSS ${Math.round(maxRss / 1048576)} MB, ` +
          `${fake.connections} server connections; ${summary}; ${failureCount} failed\n`,
      );

      await expectAlive(sqlgate, `during the fuzz (seed ${SEED}, after ${sent} requests)`);
      expect({ failureCount, failures }).toEqual({ failureCount: 0, failures: [] });
      expect(sent).toBe(REQUESTS);
      expect(counts.get(`502/${PROTOCOL_ERROR}`) ?? 0).toBeGreaterThan(0);
      expect(counts.get('200') ?? 0).toBeGreaterThan(0);
      expect(maxRss).toBeGreaterThan(0);
      expect(maxRss).toBeLessThan(MAX_RSS_BYTES);

      // The same process still serves a real database (its 2 s CONNECT_TIMEOUT_MS, for the fake's
      // hung logins, may cut a login on a loaded machine: then it is tried again).
      await eventually(
        async () => {
          const real = await sqlgate.post('/api/query', target({ sql: 'SELECT 1 AS one' }), 30_000);
          await expectAlive(sqlgate, 'after the fuzz', real);
          expect(describeOutcome(real)).toMatch(/^200 /);
          expect(real).toMatchObject({ body: { rows: [{ one: 1 }] } });
        },
        { withinMs: 60_000 },
      );
    } finally {
      clearInterval(sampler);
      await sqlgate.stop();
      await fake.close();
    }
  }, 600_000);
});
