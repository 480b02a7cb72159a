/** The connection port over pg, against a real PostgreSQL with password authentication. */
import { ConnectionError, DatabaseError, type ConnectionTarget, orThrow } from '@sqlgate/core';
import { eventually } from '@sqlgate/testing';
import { database, testTarget, failureOf } from './support';
import { createPostgresConnections, type PostgresConnections } from '../src';

const target: ConnectionTarget = testTarget('prefer');
const rows = { rowMode: 'object' as const, maxRows: 100 };

let connections: PostgresConnections;
beforeEach(() => {
  connections = createPostgresConnections();
});
afterEach(() => connections.close());

it('runs a statement and reports command, rowCount, fields and rows', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    const result = await orThrow(
      connection.run('SELECT n, n * 2 AS twice FROM generate_series(1, 3) AS n', rows),
    );
    expect(result).toMatchObject({ command: 'SELECT', rowCount: 3, truncated: false });
    expect(result.rows).toEqual([
      { n: 1, twice: 2 },
      { n: 2, twice: 4 },
      { n: 3, twice: 6 },
    ]);
    expect(result.fields.map((field) => [field.name, field.dataTypeName])).toEqual([
      ['n', 'int4'],
      ['twice', 'int4'],
    ]);
  } finally {
    connection.release();
  }
});

it('reads no more than maxRows rows and says the result was truncated', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    const result = await orThrow(
      connection.run('SELECT generate_series(1, 1000000)', {
        rowMode: 'array',
        maxRows: 5,
      }),
    );
    expect(result.rows).toEqual([[1], [2], [3], [4], [5]]);
    expect(result.truncated).toBe(true);
  } finally {
    connection.release();
  }
});

it('settles a refused statement with a DatabaseError that keeps every server field', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    expect(await failureOf(connection.run('SELECT * FROM no_such_table', rows))).toMatchObject({
      fields: { code: '42P01', severity: 'ERROR', position: '15', routine: expect.any(String) },
    });
    // The connection is still usable after an error.
    expect((await orThrow(connection.run('SELECT 1 AS ok', rows))).rows).toEqual([{ ok: 1 }]);
  } finally {
    connection.release();
  }
});

it('reports the transaction status the server sent', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    expect(connection.transactionStatus()).toBe('idle');
    await orThrow(connection.run('BEGIN', rows));
    expect(connection.transactionStatus()).toBe('in-transaction');
    expect(await failureOf(connection.run('SELECT 1/0', rows))).toBeInstanceOf(DatabaseError);
    expect(connection.transactionStatus()).toBe('failed');
    await orThrow(connection.run('ROLLBACK', rows));
    expect(connection.transactionStatus()).toBe('idle');
  } finally {
    connection.release();
  }
});

it('cancels the running statement with a CancelRequest', async () => {
  const connection = await orThrow(connections.acquire(target));
  const observer = await orThrow(connections.acquire(target));
  try {
    const outcome = failureOf(connection.run("SELECT pg_sleep(60), 'cancel-probe'", rows));
    // Running: a CancelRequest that came before the statement would find nothing to stop.
    await eventually(async () => {
      const running = await orThrow(
        observer.run(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%cancel-probe%' AND pid <> pg_backend_pid()",
          rows,
        ),
      );
      return running.rows.length === 1;
    });
    await connection.cancel();
    expect(await outcome).toMatchObject({ fields: { code: '57014' } });
  } finally {
    connection.release();
    observer.release();
  }
});

it('keys pools by credentials: a wrong password is refused while a pool opened with the right one is alive', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    expect(await failureOf(connections.acquire({ ...target, password: 'wrong' }))).toMatchObject({
      fields: { code: '28P01' },
    });
    expect(await failureOf(connections.acquire({ ...target, password: undefined }))).toBeDefined();
  } finally {
    connection.release();
  }
  expect(connections.poolStats().map((stat) => stat.poolId)).toEqual([
    `${database.host}:${database.port}:${database.user}:${database.database}`,
  ]);
});

it('never puts a password in a cache scope, and gives none to a login the server refuses', async () => {
  const scope = await orThrow(connections.scopeOf(target));
  expect(JSON.stringify(scope)).not.toContain(database.password);
  // The scope names the database as its server tells it: a refused login reaches none.
  expect(await failureOf(connections.scopeOf({ ...target, password: 'other' }))).toMatchObject({
    fields: { code: '28P01' },
  });
});

it('refuses a connection to a port where nothing listens with ECONNREFUSED', async () => {
  expect(
    await failureOf(connections.acquire({ ...target, host: '127.0.0.1', port: 1 })),
  ).toMatchObject({
    systemCode: 'ECONNREFUSED',
  });
  expect(await failureOf(connections.acquire({ ...target, port: 1 }))).toBeInstanceOf(
    ConnectionError,
  );
});

it('cleans the session before the connection is lent again', async () => {
  const single = createPostgresConnections({ max: 1 });
  try {
    const first = await orThrow(single.acquire(target));
    await orThrow(first.run('SET search_path TO pg_catalog', rows));
    first.release({ resetSession: true });
    const second = await orThrow(single.acquire(target));
    try {
      expect((await orThrow(second.run('SHOW search_path', rows))).rows).toEqual([
        { search_path: '"$user", public' },
      ]);
    } finally {
      second.release();
    }
  } finally {
    await single.close();
  }
});

it('keeps a column named __proto__ as data', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    const result = await orThrow(connection.run('SELECT 1 AS "__proto__", 2 AS x', rows));
    const [row] = result.rows as Record<string, unknown>[];
    expect(Object.getOwnPropertyNames(row)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(row)).toBe('{"__proto__":1,"x":2}');
  } finally {
    connection.release();
  }
});
