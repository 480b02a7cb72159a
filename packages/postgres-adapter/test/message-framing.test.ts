/** The one reader of every server byte (docs/decisions.md 10.1, 10.2). */
import { DatabaseError } from 'pg-protocol';
import { backend, encode } from '@sqlgate/testing';
import { readDataRow } from '../src/data-row';
import { MessageFraming, ProtocolViolation } from '../src/message-framing';
import { recordingReader } from './recording-reader';

const LIMITS = { maxMessageBytes: 1024 * 1024 };

const LOGIN = encode([
  backend.authenticationOk(),
  backend.parameterStatus('standard_conforming_strings', 'off'),
  backend.backendKeyData(42, 7),
  backend.readyForQuery('I'),
]);

const ROUND_TRIP = encode([
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

/** Feeds `bytes` in chunks cut at `cuts`; what was given to pg, joined. */
function feed(framing: MessageFraming, bytes: Buffer, cuts: number[] = []): Buffer {
  const toPg: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    framing.scan(bytes.subarray(start, cut), (piece) => toPg.push(Buffer.from(piece)));
    start = cut;
  }
  return Buffer.concat(toPg);
}

/** A framing past the login, with a reader recording into `seen`. */
function loggedIn(seen: string[] = []): MessageFraming {
  const framing = new MessageFraming(LIMITS);
  feed(framing, LOGIN);
  recordingReader(framing, seen);
  return framing;
}

it('gives pg the login and nothing after it, reads the rest itself, whatever the cuts', () => {
  const bytes = Buffer.concat([LOGIN, ROUND_TRIP]);
  const wanted = [
    'rowDescription v',
    'row ["a"]',
    'row [null]',
    'row ["ccc"]',
    'commandComplete SELECT 3',
    'readyForQuery',
  ];
  for (let cut = 1; cut < bytes.length; cut++) {
    for (const second of [cut + 1, cut + 7]) {
      const seen: string[] = [];
      const framing = new MessageFraming(LIMITS);
      recordingReader(framing, seen);
      const cuts = second < bytes.length ? [cut, second] : [cut];
      expect(feed(framing, bytes, cuts).equals(LOGIN)).toBe(true);
      expect(seen).toEqual(wanted);
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
  for (let cut = 1; cut < rows.length; cut++) {
    const seen: string[] = [];
    const framing = loggedIn(seen);
    framing.maxRowBytes = 50;
    feed(framing, rows, [cut]);
    expect(seen).toEqual(['row ["keep"]', 'commandComplete SELECT 2']);
    expect(framing.facts.droppedRows).toBe(1);
  }
  const seen: string[] = [];
  const dropping = loggedIn(seen);
  dropping.dropDataRows = true;
  feed(dropping, rows);
  expect(seen).toEqual(['commandComplete SELECT 2']);
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
])('refuses %s, during the login and after it', (_what, bytes) => {
  expect(() => feed(new MessageFraming(LIMITS), bytes)).toThrow(ProtocolViolation);
  expect(() => feed(loggedIn(), bytes)).toThrow(ProtocolViolation);
});

it('refuses a row, of any size, in answer to a COPY TO STDOUT', () => {
  for (const value of ['small', 'x'.repeat(100_000)]) {
    const framing = loggedIn();
    framing.admitCopyData = () => undefined;
    framing.maxRowBytes = 10;
    expect(() => feed(framing, encode([backend.dataRow([value])]))).toThrow(ProtocolViolation);
  }
});

it('drops every row after one too large: a prefix, never a hole', () => {
  const seen: string[] = [];
  const framing = loggedIn(seen);
  framing.maxRowBytes = 100;
  const rows = encode([
    backend.dataRow(['first']),
    backend.dataRow(['x'.repeat(200)]),
    backend.dataRow(['after']),
  ]);
  feed(framing, rows);
  expect(seen).toEqual(['row ["first"]']);
  expect(framing.facts.droppedRows).toBe(2);
});

describe('messages decoded once, for the round trip reading them', () => {
  it('decodes an ErrorResponse with every field, and the ReadyForQuery after it', () => {
    const seen: string[] = [];
    const framing = loggedIn(seen);
    let error: DatabaseError | undefined;
    framing.reader = { ...recordingReader(framing, seen), serverError: (e) => (error = e) };
    feed(
      framing,
      Buffer.concat([
        rawMessage('E', 'SERROR\0VERROR\0C42P01\0Mno such table\0Dd\0Hh\0P7\0tt\0nn\0Rparser\0\0'),
        encode([backend.readyForQuery('E')]),
      ]),
    );
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({
      message: 'no such table',
      severity: 'ERROR',
      code: '42P01',
      detail: 'd',
      hint: 'h',
      position: '7',
      table: 't',
      constraint: 'n',
      routine: 'parser',
    });
    expect(seen).toEqual(['readyForQuery']);
    expect(framing.facts.transactionStatus).toBe('E');
  });

  it('hands parameter types, an empty query and a suspended portal to the reader', () => {
    const seen: string[] = [];
    const framing = loggedIn(seen);
    const parameterTypes = Buffer.from([0, 2, 0, 0, 0, 23, 0, 0, 0, 25]);
    feed(
      framing,
      Buffer.concat([
        rawMessage('t', parameterTypes.toString('latin1')),
        rawMessage('I', ''),
        rawMessage('s', ''),
        encode([backend.noticeResponse({ S: 'NOTICE', C: '00000', M: 'a notice' })]),
      ]),
    );
    expect(seen).toEqual(['parameterDescription 23,25', 'emptyQuery', 'portalSuspended']);
    expect(() => feed(loggedIn(), rawMessage('t', '\0\u0002\0\0\0\u0017'))).toThrow(
      ProtocolViolation,
    );
  });

  it('tells the socket of notifications, in and between round trips', () => {
    const framing = loggedIn();
    framing.reader = null;
    const heard: string[] = [];
    framing.onNotification = ({ channel, payload, processId }) =>
      heard.push(`${processId} ${channel} ${payload}`);
    feed(framing, rawMessage('A', '\0\0\0\u0009chan\0hello\0'));
    expect(heard).toEqual(['9 chan hello']);
  });

  it("between round trips: refuses a row, and throws an ErrorResponse as the connection's end", () => {
    const idle = (): MessageFraming => {
      const framing = loggedIn();
      framing.reader = null;
      return framing;
    };
    expect(() => feed(idle(), encode([backend.dataRow(['x'])]))).toThrow(ProtocolViolation);
    expect(() => feed(idle(), encode([backend.commandComplete('SELECT 1')]))).toThrow(
      ProtocolViolation,
    );
    const fatal = rawMessage('E', 'SFATAL\0C57P01\0Mterminating connection\0\0');
    expect(() => feed(idle(), fatal)).toThrow(DatabaseError);
    // ParameterStatus and notices may come at any time.
    feed(idle(), encode([backend.parameterStatus('TimeZone', 'UTC')]));
  });

  it('lets go of the reader at ReadyForQuery, and tells it when the connection is lost', () => {
    const seen: string[] = [];
    const framing = loggedIn(seen);
    framing.connectionLost(new Error('gone'));
    expect(seen).toEqual(['lost gone']);
    expect(framing.reader).toBeNull();
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
