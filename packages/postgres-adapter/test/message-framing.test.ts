/** The framing every server byte passes before pg parses it (docs/decisions.md 10.1, 10.2). */
import { backend, encode } from '@sqlgate/testing';
import { MessageFraming, ProtocolViolation } from '../src/message-framing';

const LIMITS = { maxMessageBytes: 1024 * 1024 };

const answer = encode([
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
    encode([backend.readyForQuery('I'), backend.authenticationRequest(3)]),
  ],
  [
    'a backend key after the login',
    encode([backend.readyForQuery('I'), backend.backendKeyData(1, 2)]),
  ],
])('refuses %s', (_what, bytes) => {
  const framing = new MessageFraming(LIMITS);
  expect(() => deliver(framing, bytes, [])).toThrow(ProtocolViolation);
});
