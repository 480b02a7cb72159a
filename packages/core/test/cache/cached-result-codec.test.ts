import fc from 'fast-check';
import { decodeCacheRecord, encodeCacheRecord } from '../../src/cache';
import { RawJson, serializeResponse } from '../../src/json';
import type { CacheEntryRecord } from '../../src/ports/cache-store';
import { record } from './fixtures';

/** Fixed, so a failure replays; change it to explore further. */
const SEED = 20_260_127;

const roundTrip = (entry: CacheEntryRecord): CacheEntryRecord =>
  decodeCacheRecord(encodeCacheRecord(entry));

const withRows = (rows: unknown[], fields: unknown[] = []): CacheEntryRecord =>
  record('k', {
    result: { rows, fields, rowCount: rows.length, command: 'SELECT', truncated: false },
  });

/** Column names that could be mistaken for the codec's own syntax or an object's machinery. */
const awkwardKey = fc.constantFrom(
  '$',
  '$$',
  '$v',
  '$$$x',
  '__proto__',
  'toJSON',
  'constructor',
  '0',
  '10',
  '',
);
const key = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), awkwardKey);

/** Values the adapter produces, or a library caller's parsed json: each comes back as it was. */
const exactLeaf = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.json({ maxDepth: 3 }).map((text) => new RawJson(text)),
  fc.constantFrom(new RawJson('-0'), new RawJson('12345678901234567890123'), new RawJson('1.10')),
  fc.date({ noInvalidDate: true }),
  fc.uint8Array({ maxLength: 8 }).map((bytes) => Buffer.from(bytes)),
);

/** Values JSON writes as something else (undefined, a Map, a typed array, an object with toJSON). */
const lossyLeaf = fc.oneof(
  fc.constant(undefined),
  fc.constant(new Map([['a', 1]])),
  fc.uint8Array({ maxLength: 4 }),
  fc.constant({ toJSON: () => ({ $: 'x', v: -0 }) }),
  fc.constant(new Date(Number.NaN)),
);

function values(leaf: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      // Built from entries so that '__proto__' is an own key, as in a row of a column so named.
      fc
        .array(fc.tuple(key, tie('value')), { maxLength: 4 })
        .map((entries) => Object.fromEntries(entries)),
    ),
  }));
  return value;
}

const rows = (leaf: fc.Arbitrary<unknown>) => fc.array(values(leaf), { maxLength: 6 });

describe('encodeCacheRecord / decodeCacheRecord', () => {
  it('brings back every value the adapter makes, of any nesting, with its type (seeded)', () => {
    fc.assert(
      fc.property(rows(exactLeaf), rows(exactLeaf), (someRows, fields) => {
        const original = withRows(someRows, fields);
        const decoded = roundTrip(original);
        expect(decoded).toEqual(original);
        expect(serializeResponse(decoded.result)).toBe(serializeResponse(original.result));
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('serves the same JSON for values JSON itself would change (seeded)', () => {
    fc.assert(
      fc.property(rows(fc.oneof(exactLeaf, lossyLeaf)), (someRows) => {
        const original = withRows(someRows);
        expect(serializeResponse(roundTrip(original).result)).toBe(
          serializeResponse(original.result),
        );
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('keeps RawJson text verbatim, also inside arrays, and -0, NaN and Infinity as numbers', () => {
    const original = withRows([
      { j: new RawJson('{"b": 1, "a": 2, "b": 3}'), z: new RawJson('-0'), n: -0 },
      [[new RawJson('1.10'), null], Number.NaN, Number.POSITIVE_INFINITY],
    ]);
    const decoded = roundTrip(original);
    const [objectRow, arrayRow] = decoded.result.rows as [Record<string, unknown>, unknown[]];
    expect(objectRow.j).toBeInstanceOf(RawJson);
    expect(Object.is(objectRow.n, -0)).toBe(true);
    expect(arrayRow[1]).toBeNaN();
    expect(arrayRow[2]).toBe(Number.POSITIVE_INFINITY);
    expect(serializeResponse(decoded.result.rows)).toBe(
      '[{"j":{"b": 1, "a": 2, "b": 3},"z":-0,"n":0},[[1.10,null],null,null]]',
    );
  });

  it('never reads a column for a tag, nor a tag for a column', () => {
    const row = { $: 'j', v: 'not json', $$: 1, $x: { $: 'd', v: 0 } };
    const decoded = roundTrip(withRows([row, [{ $: 'n', v: '-0' }]])).result.rows;
    expect(decoded).toEqual([row, [{ $: 'n', v: '-0' }]]);
  });

  it('keeps a column named __proto__ a column', () => {
    const row = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const [decoded] = roundTrip(withRows([row])).result.rows as [Record<string, unknown>];
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.keys(decoded)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(serializeResponse(decoded)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('brings back cachedAt as a Date, the other fields as they were, bigint and Buffer too', () => {
    const original = record('key', {
      reads: null,
      cachedAt: new Date('2025-03-04T05:06:07.089Z'),
      hits: 7,
      result: {
        rows: [[12345678901234567890n, Buffer.from([0, 255])]],
        fields: [{ name: 'n', dataTypeID: 20 }],
        rowCount: null,
        command: null,
        truncated: true,
      },
    });
    const decoded = roundTrip(original);
    expect(decoded).toEqual(original);
    expect(decoded.cachedAt).toBeInstanceOf(Date);
    const [[big, bytes]] = decoded.result.rows as [[bigint, Buffer]];
    expect(typeof big).toBe('bigint');
    expect(Buffer.isBuffer(bytes)).toBe(true);
  });

  it('writes a record that needs no tag as plain JSON, and reads either form back alike', () => {
    const plain = record('plain');
    const withJson = record('json');
    withJson.result.rows = [{ doc: new RawJson('{"n": 1.10}') }];

    const plainText = encodeCacheRecord(plain);
    const taggedText = encodeCacheRecord(withJson);

    expect(plainText.startsWith('[2,')).toBe(true);
    expect(JSON.parse(plainText)[1].result).toEqual(plain.result);
    expect(taggedText.startsWith('[1,')).toBe(true);
    expect(decodeCacheRecord(plainText)).toEqual(plain);
    const back = decodeCacheRecord(taggedText);
    expect(back.cachedAt).toEqual(withJson.cachedAt);
    expect(serializeResponse(back.result)).toBe(serializeResponse(withJson.result));
  });

  it('refuses a text it did not write', () => {
    const encoded = encodeCacheRecord(record('k'));
    expect(() => decodeCacheRecord(encoded.replace(/^\[\d+,/, '[9,'))).toThrow(TypeError);
    expect(() => decodeCacheRecord('{"key":"k"}')).toThrow(TypeError);
    expect(() => decodeCacheRecord(encoded.replace('"scope":', '"scopes":'))).toThrow(TypeError);
    expect(() => decodeCacheRecord('[1,{"$":"z","v":1}]')).toThrow(TypeError);
    expect(() => decodeCacheRecord('not json')).toThrow(SyntaxError);
  });
});
