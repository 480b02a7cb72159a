/**
 * The same server bytes, cut into chunks every way (one byte at a time, at seeded random places,
 * whole), are read the same: the login's messages by pg's parser, every message after it by the
 * framing's one reader, in the same order (docs/decisions.md 10.1).
 */
import { PassThrough } from 'node:stream';
import { parse } from 'pg-protocol';
import { backend, encode } from '@sqlgate/testing';
import { MessageFraming } from '../src/message-framing';
import { recordingReader } from './recording-reader';

const LIMITS = { maxMessageBytes: 1024 * 1024 };

const ROWS: (string | null)[][] = [
  ['a', null, ''],
  ['é€😀', 'x'.repeat(70_000), '\n'],
  [null, null, null],
  ['"quoted"', '\\', '0'],
];

const ANSWER = encode([
  backend.authenticationOk(),
  backend.readyForQuery('I'),
  backend.parseComplete(),
  backend.bindComplete(),
  backend.parameterStatus('TimeZone', 'UTC'),
  backend.rowDescription([{ name: 'a' }, { name: 'b' }, { name: 'c' }]),
  ...ROWS.map((row) => backend.dataRow(row)),
  backend.commandComplete(`SELECT ${ROWS.length}`),
  backend.readyForQuery('I'),
]);

/** Every message, in order: the login's as pg parsed them, the rest as the framing read them. */
async function read(cuts: number[]): Promise<string[]> {
  const seen: string[] = [];
  const framing = new MessageFraming(LIMITS);
  recordingReader(framing, seen);
  const pgStream = new PassThrough();
  void parse(pgStream, (message) => seen.push(`pg ${message.name}`));
  let start = 0;
  for (const cut of [...cuts, ANSWER.length]) {
    // Bytes of its own for each chunk, as a socket gives them.
    framing.scan(Buffer.from(ANSWER.subarray(start, cut)), (piece) => pgStream.write(piece));
    start = cut;
    // pg parses what it was given before the next chunk comes, as on a socket.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return seen;
}

function seededCuts(seed: number, length: number): number[] {
  let state = seed;
  const cuts: number[] = [];
  for (let at = 0; ;) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    at += 1 + (state % 9000);
    if (at >= length) return cuts;
    cuts.push(at);
  }
}

it('decodes the same messages from the same bytes however they were cut', async () => {
  const whole = await read([]);
  expect(whole).toEqual([
    'pg authenticationOk',
    'pg readyForQuery',
    'rowDescription a,b,c',
    ...ROWS.map((row) => `row ${JSON.stringify(row)}`),
    `commandComplete SELECT ${ROWS.length}`,
    'readyForQuery',
  ]);
  const byteByByte = Array.from({ length: ANSWER.length - 1 }, (_, index) => index + 1);
  expect(await read(byteByByte)).toEqual(whole);
  for (let seed = 1; seed <= 50; seed++) {
    expect(await read(seededCuts(seed, ANSWER.length))).toEqual(whole);
  }
});
