/**
 * Results of every kind of value the adapter makes survive the cache codec of core, as a store
 * outside the process (Redis) keeps them: served from the cache, they read as they did from the
 * database.
 */
import {
  decodeCacheRecord,
  encodeCacheRecord,
  orThrow,
  RawJson,
  serializeResponse,
  type CacheEntryRecord,
  type CachedResult,
} from '@sqlgate/core';
import { createPostgresConnections } from '../src';
import { testTarget } from './support';

/** One column of each built-in kind the type rules treat apart (docs/decisions.md 4), and names a codec could trip on. */
const MANY_TYPES = `SELECT true AS bool, 32767::int2 AS int2, 2147483647 AS int4,
  9223372036854775807::int8 AS int8, 4294967295::oid AS oid, 1.5::float4 AS float4,
  '-0'::float8 AS negative_zero, 'NaN'::float8 AS nan, '-Infinity'::float8 AS infinity,
  1.7976931348623157e308::float8 AS biggest, 1e-320::float8 AS subnormal,
  123456789012345678901234567890.000100::numeric AS numeric, 12.5::money AS money,
  E'caf\\u00e9 \\U0001F600 "q" \\\\ \\n' AS text, '\\x00ff'::bytea AS bytea,
  '{"n": 12345678901234567890123, "x": 1.10, "x": 2}'::json AS json,
  '{"b": [1, 1.0, "s"], "a": null}'::jsonb AS jsonb, '"just a string"'::json AS json_string,
  '12'::json AS json_integer, 'null'::jsonb AS json_null,
  '2024-02-29'::date AS date, '23:59:59.999999'::time AS time,
  '2024-01-01 12:00:00.123456+05:30'::timestamptz AS timestamptz, '1 year 2 mons 3 days 04:05:06.7'::interval AS interval,
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS uuid, '192.168.0.1/24'::inet AS inet,
  ARRAY[1, NULL, 3] AS int_array, ARRAY['{"a":1}'::json, NULL, '[1.10]'::json] AS json_array,
  ARRAY[ARRAY['a', NULL], ARRAY['{', '"']] AS text_matrix, ARRAY['(1,2),(0,0)'::box, '(3,3),(2,2)'::box] AS box_array,
  '[2:3]={7,8}'::int[] AS shifted_array, ARRAY['-0'::float8, 'NaN'] AS float_array,
  '1 2 3'::int2vector AS int2vector, '23 25'::oidvector AS oidvector, point(1.5, -2) AS point,
  ROW(1, 'x', NULL) AS record, NULL::text AS nothing,
  1 AS "$", 2 AS "__proto__", 3 AS "$$", 4 AS "toJSON", 5 AS int4`;

async function manyTypes(rawJson: boolean, rowMode: 'object' | 'array'): Promise<CachedResult> {
  await using connections = createPostgresConnections({ rawJson });
  const connection = await orThrow(connections.acquire(testTarget()));
  try {
    const { results, error } = await connection.runBatch([MANY_TYPES], { rowMode, maxRows: 10 });
    if (error) throw error;
    const [result] = results;
    if (!result) throw new Error('no result');
    const { rows, fields, rowCount, command, truncated } = result;
    return { rows, fields, rowCount, command, truncated };
  } finally {
    connection.release();
  }
}

function entryOf(result: CachedResult): CacheEntryRecord {
  return {
    key: 'key',
    scope: 'scope',
    server: 'server',
    query: MANY_TYPES,
    reads: [],
    result,
    sizeBytes: Buffer.byteLength(serializeResponse(result)),
    executionTime: 0.5,
    cachedAt: new Date(),
    freshMs: 1000,
    hits: 0,
  };
}

describe.each([
  ['json as RawJson', true],
  ['json parsed', false],
] as const)('a result of every kind of value (%s)', (_name, rawJson) => {
  it.each(['object', 'array'] as const)(
    'reads the same after the codec, in %s rows',
    async (rowMode) => {
      const original = entryOf(await manyTypes(rawJson, rowMode));
      const decoded = decodeCacheRecord(encodeCacheRecord(original));

      expect(serializeResponse(decoded.result)).toBe(serializeResponse(original.result));
      expect(decoded).toEqual(original);
    },
  );
});

it('keeps what JSON alone would lose: json text, -0, and the row of a column named __proto__', async () => {
  const original = entryOf(await manyTypes(true, 'object'));
  const [row] = decodeCacheRecord(encodeCacheRecord(original)).result.rows as [
    Record<string, unknown>,
  ];
  expect(row.json).toBeInstanceOf(RawJson);
  expect(serializeResponse(row.json)).toBe('{"n": 12345678901234567890123, "x": 1.10, "x": 2}');
  expect(serializeResponse(row.negative_zero)).toBe('-0');
  expect(Object.hasOwn(row, '__proto__')).toBe(true);
  expect(row.$).toBe(1);
});
