/**
 * A streamed statement's sink admits each row before the framing reads it, by its size on the
 * wire (docs/decisions.md 10.2): against a real PostgreSQL, whose rows arrive in many chunks, each
 * row is handed over with exactly what was admitted for it, and a refused row cuts the statement
 * there.
 */
import { orThrow, type RowSink, type RunOptions } from '@sqlgate/core';
import { testTarget } from './support';
import { createPostgresConnections, type PostgresConnections } from '../src';

/** 3,000 rows of 0 to 999 characters: many chunks, rows split across them. */
const SQL = "SELECT repeat('x', (g * 37) % 1000) AS v FROM generate_series(1, 3000) AS g";
const ROWS = 3000;
/** A DataRow of one text column: a 2-byte count, a 4-byte length and the value. */
const wireBytesOf = (value: string): number => 2 + 4 + value.length;

let connections: PostgresConnections;
beforeEach(() => {
  connections = createPostgresConnections({ max: 1 });
});
afterEach(() => connections.close());

/** A sink admitting `admitted` rows at most; it records what it admitted and was handed. */
function admittingSink(admitted: number) {
  const seen = { admissions: [] as number[], refused: 0, rows: [] as [string, number][] };
  const sink: RowSink = {
    describe: () => undefined,
    admit: (bytes) => {
      if (seen.admissions.length >= admitted) {
        seen.refused++;
        return false;
      }
      seen.admissions.push(bytes);
      return true;
    },
    row: (_position, row, bytes) => {
      seen.rows.push([(row as { v: string }).v, bytes]);
      return true;
    },
    drained: () => Promise.resolve(),
    complete: () => undefined,
  };
  return { sink, seen };
}

const streamed = (sink: RowSink): RunOptions => ({
  rowMode: 'object',
  maxRows: Number.MAX_SAFE_INTEGER,
  rowSink: sink,
});

it('hands each row over with the bytes admitted for it', async () => {
  const { sink, seen } = admittingSink(ROWS);
  const connection = await orThrow(connections.acquire(testTarget()));
  try {
    const result = await orThrow(connection.run(SQL, streamed(sink)));
    expect(result.truncated).toBe(false);
    expect(seen.rows).toHaveLength(ROWS);
    expect(seen.rows.map(([, bytes]) => bytes)).toEqual(seen.admissions);
    for (const [value, bytes] of seen.rows) expect(bytes).toBe(wireBytesOf(value));
  } finally {
    connection.release();
  }
});

it('cuts the statement at the first row refused, and the connection goes on', async () => {
  const { sink, seen } = admittingSink(1234);
  const connection = await orThrow(connections.acquire(testTarget()));
  try {
    const result = await orThrow(connection.run(SQL, streamed(sink)));
    expect(result).toMatchObject({ truncated: true, truncatedBy: 'bytes' });
    // Every row admitted before the refusal, in order; none after it, and none asked for.
    expect(seen.rows.map(([value]) => value.length)).toEqual(
      Array.from({ length: 1234 }, (_, index) => ((index + 1) * 37) % 1000),
    );
    expect(seen.refused).toBe(1);
    const next = await orThrow(
      connection.run('SELECT 2 AS two', { rowMode: 'object', maxRows: 10 }),
    );
    expect(next.rows).toEqual([{ two: 2 }]);
  } finally {
    connection.release();
  }
});
