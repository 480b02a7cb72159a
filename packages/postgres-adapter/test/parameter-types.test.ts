/**
 * A statement sent with parameters is described as a statement, so that its result says which
 * types PostgreSQL gave its parameters (docs/decisions.md 10.36): the result cache keeps a read
 * whose date/time parameter holds 'now' out of the cache. Against a real PostgreSQL, unnamed and
 * named (docs/decisions.md 10.30), and with its rows as before.
 */
import { orThrow, type Connection, type RunOptions } from '@sqlgate/core';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { testTarget } from './support';

const TIMESTAMPTZ = 1184;
const INT4 = 23;
const TEXT = 25;
const DATE_ARRAY = 1182;

const SQL =
  'SELECT $1::timestamptz AS at, $2::int + 1 AS next, $3::text AS note, $4::date[] AS days';
const PARAMS = ['2024-01-01 00:00:00+00', 41, 'now', ['2024-02-03']];

let connections: PostgresConnections;
beforeEach(() => {
  connections = createPostgresConnections({ max: 1 });
});
afterEach(() => connections.close());

async function withConnection<T>(work: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await orThrow(connections.acquire(testTarget()));
  try {
    return await work(connection);
  } finally {
    connection.release();
  }
}

it.each<[string, RunOptions]>([
  ['unnamed', { rowMode: 'object', maxRows: 10, params: PARAMS }],
  [
    'named, prepared and then run by its name',
    { rowMode: 'object', maxRows: 10, params: PARAMS, nameable: [true], stopEarly: [true] },
  ],
])('a %s statement reports the types PostgreSQL gave its parameters', async (_name, options) => {
  await withConnection(async (connection) => {
    for (let run = 0; run < 2; run++) {
      const result = await orThrow(connection.run(SQL, options));
      expect(result.parameterTypes).toEqual([TIMESTAMPTZ, INT4, TEXT, DATE_ARRAY]);
      expect(result.rows).toEqual([
        { at: expect.any(String), next: 42, note: 'now', days: ['2024-02-03'] },
      ]);
      expect(result.fields.map((field) => field.dataTypeName)).toEqual([
        'timestamptz',
        'int4',
        'text',
        '_date',
      ]);
    }
  });
});

it('reports the inferred type of a parameter the text does not cast', async () => {
  await withConnection(async (connection) => {
    const result = await orThrow(
      connection.run('SELECT d FROM (VALUES (date $$2024-01-01$$)) v(d) WHERE d < $1', {
        rowMode: 'object',
        maxRows: 10,
        params: ['2030-01-01'],
      }),
    );
    expect(result.parameterTypes).toEqual([1082]);
    expect(result.rows).toHaveLength(1);
  });
});

it('describes nothing for a statement without parameters', async () => {
  await withConnection(async (connection) => {
    const result = await orThrow(
      connection.run('SELECT 1 AS one', { rowMode: 'object', maxRows: 10 }),
    );
    expect(result.parameterTypes).toBeUndefined();
    expect(result.rows).toEqual([{ one: 1 }]);
  });
});

it('keeps the types of each statement of a batch to itself', async () => {
  await withConnection(async (connection) => {
    const batch = await connection.runBatch(['SELECT $1::text AS a', 'SELECT $1::date AS b'], {
      rowMode: 'object',
      maxRows: 10,
      params: ['2024-01-01'],
    });
    expect(batch.error).toBeUndefined();
    expect(batch.results.map((result) => result.parameterTypes)).toEqual([[TEXT], [1082]]);
  });
});
