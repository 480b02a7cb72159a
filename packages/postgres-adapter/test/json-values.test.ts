/** docs/decisions.md 10.13: library callers get json parsed unless they ask for PostgreSQL's text. */
import { RawJson, serializeResponse, orThrow } from '@sqlgate/core';
import { createPostgresConnections } from '../src';
import { testTarget } from './support';

const SQL = `SELECT '{"n": 12345678901234567890123, "x": 1.10}'::json AS j, '-0'::float8 AS z,
  ARRAY['[1]'::jsonb, NULL] AS a, 'x' AS t`;

/** What JSON.parse makes of the 23-digit number: the parsed default loses digits. */
const ROUNDED = Number('12345678901234567890123');

async function firstRow(rawJson: boolean | undefined, rowMode: 'object' | 'array') {
  await using connections = createPostgresConnections(rawJson === undefined ? {} : { rawJson });
  const connection = await orThrow(connections.acquire(testTarget()));
  try {
    const { results } = await connection.runBatch([SQL], { rowMode, maxRows: 10 });
    return results[0]?.rows[0];
  } finally {
    connection.release();
  }
}

it('parses json by default, in both row modes', async () => {
  const row = (await firstRow(undefined, 'object')) as Record<string, unknown>;
  expect(row).toEqual({ j: { n: ROUNDED, x: 1.1 }, z: -0, a: [[1], null], t: 'x' });
  expect(Object.is(row.z, -0)).toBe(true);
  expect(await firstRow(false, 'array')).toEqual([{ n: ROUNDED, x: 1.1 }, -0, [[1], null], 'x']);
});

it('hands out RawJson with rawJson: true, spliced verbatim by serializeResponse', async () => {
  const row = (await firstRow(true, 'object')) as Record<string, unknown>;
  expect(row.j).toBeInstanceOf(RawJson);
  expect(serializeResponse(row)).toBe(
    '{"j":{"n": 12345678901234567890123, "x": 1.10},"z":-0,"a":[[1],null],"t":"x"}',
  );
  expect(serializeResponse(await firstRow(true, 'array'))).toBe(
    '[{"n": 12345678901234567890123, "x": 1.10},-0,[[1],null],"x"]',
  );
});
