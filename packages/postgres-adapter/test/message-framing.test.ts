/** The framing every server byte passes before pg parses it (docs/decisions.md 10.1, 10.2). */
import { PassThrough } from 'node:stream';
import { parse } from 'pg-protocol';
import { backend, encode } from '@sqlgate/testing';
import { readDataRow } from '../src/data-row';
import { MessageFraming, ProtocolViolation } from '../src/message-framing';

const LIMITS = { maxMessageBytes: 1024 * 1024 };

const answer = encode([
  backend.authenticationOk(),
  backend.parameterStatus('standard_conforming_strings', 'off'),
  backend.backendKeyData(42, 7),
  backend.parseComplete(),
  backend.bindComplete(),
  backend.rowDescription([{ name: 'v' }]),
  backend.dataRow(['a']),
  backend.dataRow([null]),
  backend.dataRow(['ccc']),
  backend.commandComplete('SELECT 3'),
  backend.readyForQuery('T'),
]);

/** A message of `type` whose body is `body` as written (latin1), with a correct length. */
function rawMessage(type: string, body: string): Buffer {
  const bytes = Buffer.from(body, 'latin1');
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(bytes.length + 4, 1);
  return Buffer.concat([header, bytes]);
}

/**
 * Feeds `bytes` in chunks cut at `cuts`; what was delivered, joined. The pieces are kept as given,
 * not copied, the way pg's parser keeps an incomplete message: a piece the framing changed after
 * handing it over would show here.
 */
function deliver(framing: MessageFraming, bytes: Buffer, cuts: number[]): Buffer {
  const delivered: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    framing.scan(bytes.subarray(start, cut), (piece) => delivered.push(piece));
    start = cut;
  }
  return Buffer.concat(delivered);
}

it('passes every byte on, whatever the chunk boundaries, and keeps the connection facts', () => {
  for (let cut = 1; cut < answer.length; cut++) {
    for (const second of [cut + 1, cut + 7]) {
      const framing = new MessageFraming(LIMITS);
      const cuts = second < answer.length ? [cut, second] : [cut];
      expect(deliver(framing, answer, cuts).equals(answer)).toBe(true);
      expect(framing.facts).toMatchObject({
        processId: 42,
        secretKey: 7,
        transactionStatus: 'T',
        receipts: 2, // ParseComplete and BindComplete
        droppedRows: 0,
      });
      expect(framing.facts.parameters.get('standard_conforming_strings')).toBe('off');
    }
  }
});

it('drops the rows a statement no longer wants, and rows larger than the limit, at any cut', () => {
  const rows = encode([
    backend.dataRow(['keep']),
    backend.dataRow(['x'.repeat(100)]),
    backend.commandComplete('SELECT 2'),
  ]);
  const expected = encode([backend.dataRow(['keep']), backend.commandComplete('SELECT 2')]);
  for (let cut = 1; cut < rows.length; cut++) {
    const framing = new MessageFraming(LIMITS);
    framing.maxRowBytes = 50;
    expect(deliver(framing, rows, [cut]).equals(expected)).toBe(true);
    expect(framing.facts.droppedRows).toBe(1);
  }
  const dropping = new MessageFraming(LIMITS);
  dropping.dropDataRows = true;
  expect(deliver(dropping, rows, []).equals(encode([backend.commandComplete('SELECT 2')]))).toBe(
    true,
  );
});

it.each([
  ['an unknown message type', Buffer.from([0x58, 0, 0, 0, 4])],
  ['a length under 4', Buffer.from([0x44, 0, 0, 0, 2, 0, 0])],
  ['a row longer than PostgreSQL can send', Buffer.from([0x44, 0x7f, 0xff, 0xff, 0xf0, 0, 1])],
  ['a message over the limit', Buffer.from([0x43, 0, 0x20, 0, 0])],
  [
    'a row whose field runs past its end',
    (() => {
      const row = encode([backend.dataRow(['abc'])]);
      row.writeInt32BE(0x7ffffff0, 7);
      return Buffer.concat([row, encode([backend.commandComplete('SELECT 1')])]);
    })(),
  ],
  [
    'a row shorter than its field count',
    (() => {
      const row = encode([backend.dataRow(['abc'])]);
      row.writeInt16BE(2, 5);
      return row;
    })(),
  ],
  [
    'a negative field length other than -1',
    (() => {
      const row = encode([backend.dataRow(['abc'])]);
      row.writeInt32BE(-5, 7);
      return row;
    })(),
  ],
  ['a malformed ReadyForQuery', encode([backend.readyForQuery('X')])],
  ['a CopyBothResponse (replication only)', rawMessage('W', '\0\0\0')],
  // pg's parser looks for a string's NUL past the end of the message: it looped for ever.
  ['an ErrorResponse whose last field has no NUL', rawMessage('E', 'SERROR\0Mno terminator')],
  ['an ErrorResponse without its final zero', rawMessage('E', 'SERROR\0Mmessage\0')],
  ['a NoticeResponse whose field has no NUL', rawMessage('N', 'Mno terminator')],
  ['a CommandComplete without a NUL', rawMessage('C', 'SELECT 1')],
  ['an empty CommandComplete', rawMessage('C', '')],
  ['a RowDescription whose name has no NUL', rawMessage('T', '\0\u0001name')],
  ['a NotificationResponse without its payload NUL', rawMessage('A', '\0\0\0\u0001chan\0payload')],
  ['a SASL mechanism list without its NUL', rawMessage('R', '\0\0\0\nSCRAM-SHA-256')],
  [
    'an authentication request after the login',
    encode([
      backend.authenticationOk(),
      backend.readyForQuery('I'),
      backend.authenticationRequest(3),
    ]),
  ],
  [
    'a backend key after the login',
    encode([backend.authenticationOk(), backend.readyForQuery('I'), backend.backendKeyData(1, 2)]),
  ],
  // pg threw a TypeError on these, whose text reached the caller, or waited for ever.
  [
    'a SASLContinue after an MD5 request',
    encode([backend.authenticationRequest(5), backend.authenticationSaslContinue('r=x')]),
  ],
  ['a SASLFinal without a SASL exchange', rawMessage('R', '\0\0\0\u000cv=x')],
  [
    'a SASLFinal before the SASLContinue',
    Buffer.concat([
      encode([backend.authenticationRequest(10)]),
      rawMessage('R', '\0\0\0\u000cv=x'),
    ]),
  ],
  [
    'a second AuthenticationSASL in the middle of the exchange',
    encode([
      backend.authenticationRequest(10),
      backend.authenticationSaslContinue('r=x'),
      backend.authenticationRequest(10),
    ]),
  ],
  ['an MD5 request with a 2-byte salt', rawMessage('R', '\0\0\0\u0005ab')],
  ['an AuthenticationOk with a body', rawMessage('R', '\0\0\0\0extra')],
  [
    'a client_encoding other than UTF8',
    encode([
      backend.authenticationOk(),
      backend.readyForQuery('I'),
      backend.parameterStatus('client_encoding', 'LATIN1'),
    ]),
  ],
])('refuses %s', (_what, bytes) => {
  const framing = new MessageFraming(LIMITS);
  expect(() => deliver(framing, bytes, [])).toThrow(ProtocolViolation);
});

it('refuses a row, of any size, in answer to a COPY TO STDOUT', () => {
  for (const value of ['small', 'x'.repeat(100_000)]) {
    const framing = new MessageFraming(LIMITS);
    framing.admitCopyData = () => undefined;
    framing.maxRowBytes = 10;
    expect(() => deliver(framing, encode([backend.dataRow([value])]), [])).toThrow(
      ProtocolViolation,
    );
  }
});

it('drops every row after one too large: a prefix, never a hole', () => {
  const framing = new MessageFraming(LIMITS);
  framing.maxRowBytes = 100;
  const first = encode([backend.dataRow(['first'])]);
  const rows = Buffer.concat([
    first,
    encode([backend.dataRow(['x'.repeat(200)])]),
    encode([backend.dataRow(['after'])]),
  ]);
  expect(deliver(framing, rows, []).equals(first)).toBe(true);
  expect(framing.facts.droppedRows).toBe(2);
});

describe('rows read by the framing for the round trip reading them (rowConsumer)', () => {
  /**
   * What a consumer and pg see of `bytes` fed in chunks cut at `cuts`: pg's part parsed by
   * pg-protocol, as pg would, so that both sides' events can be compared in order.
   */
  function events(bytes: Buffer, cuts: number[]): string[] {
    const seen: string[] = [];
    const framing = new MessageFraming(LIMITS);
    framing.rowConsumer = (values) => seen.push(`direct ${JSON.stringify(values)}`);
    const pgStream = new PassThrough();
    void parse(pgStream, (message) => {
      const { name, fields } = message as { name: string; fields?: unknown };
      seen.push(name === 'dataRow' ? `pg ${JSON.stringify(fields)}` : name);
    });
    let start = 0;
    for (const cut of [...cuts, bytes.length]) {
      framing.scan(bytes.subarray(start, cut), (piece) => pgStream.write(piece));
      start = cut;
    }
    return seen;
  }

  it('hands whole rows to the consumer, in order with the messages pg reads, whatever the chunks', async () => {
    const rows = [['a'], [null], ['ccc'], ['é€😀'], ['']];
    const bytes = encode([
      backend.authenticationOk(),
      backend.parseComplete(),
      backend.bindComplete(),
      backend.rowDescription([{ name: 'v' }]),
      ...rows.map((row) => backend.dataRow(row)),
      backend.commandComplete('SELECT 5'),
      backend.readyForQuery('I'),
    ]);
    const wanted = [
      'authenticationOk',
      'parseComplete',
      'bindComplete',
      'rowDescription',
      ...rows.map((row) => JSON.stringify(row)),
      'commandComplete',
      'readyForQuery',
    ];
    for (let cut = 1; cut < bytes.length; cut += 3) {
      // Bytes of its own for each run: pg's parser may merge a later piece into one it kept.
      const seen = events(Buffer.from(bytes), [cut]);
      await new Promise((resolve) => setImmediate(resolve)); // in case pg's side parses later
      const merged = seen.map((event) => event.replace(/^(direct|pg) /, ''));
      expect(merged).toEqual(wanted);
      // No row reaches pg's parser, wherever the chunk was cut.
      expect(seen.filter((event) => event.startsWith('direct')).length).toBe(rows.length);
    }
  });

  it('reads every row back as it was written (seeded random rows)', () => {
    let seed = 20261126;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = ['a', 'Z', '0', ' ', '\n', 'é', '€', '😀', '\u0000', '"', '\\'];
    for (let run = 0; run < 500; run++) {
      const row = Array.from({ length: Math.floor(random() * 6) }, () =>
        random() < 0.2
          ? null
          : Array.from(
              { length: Math.floor(random() * 8) },
              () => alphabet[Math.floor(random() * alphabet.length)],
            ).join(''),
      );
      const message = encode([backend.dataRow(row)]);
      expect(readDataRow(message, 5, message.length)).toEqual(row);
    }
  });

  it('refuses a broken row, whether it decodes it or only checks it', () => {
    const broken: [string, Buffer][] = [
      ['a field longer than the row', Buffer.from([0, 1, 0, 0, 0, 9, 0x61])],
      ['a row longer than its fields', Buffer.from([0, 1, 0, 0, 0, 1, 0x61, 0x62])],
      ['a negative length', Buffer.from([0, 1, 0xff, 0xff, 0xff, 0xf0])],
      ['a missing length', Buffer.from([0, 2, 0, 0, 0, 0])],
      ['no field count', Buffer.from([0])],
    ];
    for (const [, body] of broken) {
      expect(() => readDataRow(body, 0, body.length, false)).toThrow(ProtocolViolation);
      expect(() => readDataRow(body, 0, body.length)).toThrow(ProtocolViolation);
    }
  });
});
