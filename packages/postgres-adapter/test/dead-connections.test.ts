/**
 * A pooled connection that died while idle is never handed out as if alive: the first statement on it
 * moves to another connection when it provably never reached the server, and only then. No statement
 * ever runs twice. The faults are made by a proxy between the pool and PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import {
  ConnectionError,
  DatabaseError,
  orThrow,
  type ConnectionTarget,
  type Settled,
  type StatementResult,
} from '@sqlgate/core';
import { eventually, testDatabaseFromEnvironment } from '@sqlgate/testing';
import { Client } from 'pg';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { failureOf } from './support';
import { TcpProxy } from './tcp-proxy';

const database = testDatabaseFromEnvironment();
const table = `dead_connection_probe_${randomBytes(4).toString('hex')}`;
const rows = { rowMode: 'object' as const, maxRows: 100 };

let proxy: TcpProxy;
let connections: PostgresConnections;
let logged: unknown[];
let target: ConnectionTarget;

async function direct<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ ...database, ssl: false });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const insertedRows = () =>
  direct(
    async (client) =>
      (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n,
  );

/** One idle client in the pool, whose backend pid is returned. */
async function idleClient(): Promise<number> {
  const connection = await orThrow(connections.acquire(target));
  try {
    const result = await orThrow(connection.run('SELECT pg_backend_pid() AS pid', rows));
    return (result.rows[0] as { pid: number }).pid;
  } finally {
    connection.release();
  }
}

async function insertOnce(): Promise<Settled<StatementResult>> {
  const connection = await orThrow(connections.acquire(target));
  try {
    return await connection.run(`INSERT INTO ${table} VALUES (1)`, rows);
  } finally {
    connection.release();
  }
}

beforeAll(async () => {
  await direct((client) => client.query(`CREATE TABLE ${table} (n int)`));
});
afterAll(async () => {
  await direct((client) => client.query(`DROP TABLE ${table}`));
});
beforeEach(async () => {
  await direct((client) => client.query(`TRUNCATE ${table}`));
  proxy = await TcpProxy.start(database.host, database.port);
  logged = [];
  connections = createPostgresConnections({ max: 1, log: (_message, error) => logged.push(error) });
  target = {
    host: '127.0.0.1',
    port: proxy.port,
    user: database.user,
    password: database.password,
    database: database.database,
    sslMode: 'disable',
  };
});
afterEach(async () => {
  await connections.close();
  await proxy.close();
});

it('the server host forgot the connection (reset): the statement runs once, on a new connection', async () => {
  await idleClient();
  proxy.breakOpenConnections('forgotten');
  expect(await orThrow(insertOnce())).toMatchObject({ command: 'INSERT', rowCount: 1 });
  expect(await insertedRows()).toBe(1);
});

it('the backend was terminated and its FATAL arrives after the statement was sent: it runs once, elsewhere', async () => {
  const pid = await idleClient();
  proxy.breakOpenConnections('late-delivery');
  await direct((client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
  // The server's FATAL 57P01 and its close are held by the proxy: the pool has seen nothing yet.
  await eventually(() => proxy.heldConnectionsEnded);
  expect(await orThrow(insertOnce())).toMatchObject({ command: 'INSERT', rowCount: 1 });
  expect(await insertedRows()).toBe(1);
});

it('a connection that just closes after the statement was sent is not proof: the statement is not sent again', async () => {
  await idleClient();
  proxy.breakOpenConnections('silent-close');
  expect(await failureOf(insertOnce())).toBeInstanceOf(ConnectionError);
  // Had it been sent again, the new connection (which the proxy carries faithfully) would have inserted.
  expect(await insertedRows()).toBe(0);
  // The pool recovers for the next request.
  expect(await orThrow(insertOnce())).toMatchObject({ rowCount: 1 });
});

it('a pooler’s FATAL 08P01 is not proof: the statement, which the server ran, is not sent again', async () => {
  await idleClient();
  proxy.breakOpenConnections('pooler-fatal');
  expect(await failureOf(insertOnce())).toMatchObject({ fields: { code: '08P01' } });
  await eventually(async () => ((await insertedRows()) ?? 0) > 0);
  // Once, by the server; sent again, it would have run twice.
  expect(await insertedRows()).toBe(1);
});

it('a later statement of the same loan is never sent again, whatever broke', async () => {
  const connection = await orThrow(connections.acquire(target));
  try {
    await orThrow(connection.run('SELECT 1', rows));
    proxy.breakOpenConnections('forgotten');
    expect(await failureOf(connection.run(`INSERT INTO ${table} VALUES (1)`, rows))).toMatchObject({
      systemCode: 'ECONNRESET',
    });
  } finally {
    connection.release({ destroy: true });
  }
  expect(await insertedRows()).toBe(0);
});

it('a statement the server parsed before its backend was terminated is not sent again', async () => {
  const connection = await orThrow(
    connections.acquire({
      ...target,
      host: database.host,
      port: database.port,
    }),
  );
  const pid = (
    (await orThrow(connection.run('SELECT pg_backend_pid() AS pid', rows))).rows[0] as {
      pid: number;
    }
  ).pid;
  connection.release();
  const again = await orThrow(
    connections.acquire({ ...target, host: database.host, port: database.port }),
  );
  try {
    const running = failureOf(again.run(`INSERT INTO ${table} SELECT 1 FROM pg_sleep(60)`, rows));
    // Parsed and running when its backend is terminated.
    await eventually(async () => {
      const { rows: sleeping } = await direct((client) =>
        client.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'PgSleep'", [
          pid,
        ]),
      );
      return sleeping.length === 1;
    });
    await direct((client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
    const failure = await running;
    expect(failure).toMatchObject({ fields: { code: '57P01' } });
    expect(failure).toBeInstanceOf(DatabaseError);
  } finally {
    again.release();
  }
  expect(await insertedRows()).toBe(0);
});

it('a client whose end the pool already saw is dropped before any statement is sent on it', async () => {
  const pid = await idleClient();
  await direct((client) => client.query('SELECT pg_terminate_backend($1)', [pid]));
  // Let the pool see the FATAL and the close.
  await eventually(() => connections.poolStats()[0]?.totalConnections === 0);
  expect(await orThrow(insertOnce())).toMatchObject({ rowCount: 1 });
  expect(await insertedRows()).toBe(1);
  // The dropped connection was noted, without anything that could lead to the password.
  expect(logged.length).toBeGreaterThan(0);
  expect(JSON.stringify(logged.map((error) => Object.getOwnPropertyNames(error)))).not.toContain(
    'client',
  );
});
