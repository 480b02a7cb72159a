/**
 * docs/decisions.md 10.20: a cached read belongs to the database server it reached, as that server
 * tells it, not as the caller addressed it. One real PostgreSQL reached directly, through a real
 * PgBouncer (transaction and session mode) and through a plain TCP proxy is one database: a write
 * through any of these paths drops what every other path cached. Two throwaway clusters with the
 * same database, role and password never share an entry, not even at one address, and two sqlgate
 * instances sharing a Redis name one server alike.
 *
 * The callers log in as an ordinary role (no superuser, no pg_monitor); PgBouncer logs in to the
 * server as its own configured user, whatever the client's.
 */
import { UNSCOPED_INVALIDATION_WARNING } from '@sqlgate/core';
import {
  eventually,
  startLocalCluster,
  startLocalPgBouncer,
  startLocalRedis,
  type LocalCluster,
  type LocalPgBouncer,
  type LocalRedis,
} from '@sqlgate/testing';
import { Client } from 'pg';
import pino from 'pino';
import { TcpProxy } from '../../../packages/postgres-adapter/test/tcp-proxy';
import { startServer, type RunningServer, type StartServerOptions } from '../src/server';
import { database, sql } from './support';

const TABLE = 'cache_identity_rows';
/** An ordinary login: it may read the server's identity only as any role may. */
const CALLER = { user: 'cache_identity_caller', password: 'identity-caller-pw' };
/** What every instance sharing the Redis is configured with (QUERY_CACHE_SECRET). */
const SHARED_SECRET = 'a shared secret of at least thirty-two characters';

interface Path {
  name: string;
  host: string;
  port: number;
  database: string;
}

interface Answer {
  status: number;
  body: {
    rows?: Record<string, unknown>[];
    cacheStatus?: string;
    cacheReason?: string;
    warnings?: string[];
  };
}

async function post(
  server: RunningServer,
  path: Path,
  body: Record<string, unknown>,
  caller = CALLER,
): Promise<Answer> {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      host: path.host,
      port: path.port,
      database: path.database,
      sslMode: 'disable',
      ...caller,
      ...body,
    }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** A server whose pools and cache are its own, or shared through `options`' Redis. */
function startInstance(options: StartServerOptions = {}): Promise<RunningServer> {
  return startServer({
    port: 0,
    hostname: '127.0.0.1',
    logger: pino({ level: 'silent' }),
    ...options,
  });
}

/** Runs `text` as the cluster's superuser, outside sqlgate. */
async function onCluster(cluster: LocalCluster, text: string): Promise<void> {
  const client = new Client(cluster.connectionString);
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const setUp = (table: string) => `
  DROP TABLE IF EXISTS ${table};
  CREATE TABLE ${table} (id int);
  DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${CALLER.user}') THEN
      CREATE ROLE ${CALLER.user} LOGIN PASSWORD '${CALLER.password}';
    END IF;
  END $$;
  GRANT SELECT, INSERT ON ${table} TO ${CALLER.user};`;

describe('one server reached directly, through PgBouncer and through a TCP proxy', () => {
  let transactionPooler: LocalPgBouncer;
  let sessionPooler: LocalPgBouncer;
  let proxy: TcpProxy;
  let server: RunningServer;
  const paths: Path[] = [];

  beforeAll(async () => {
    await sql(setUp(TABLE));
    [transactionPooler, sessionPooler, proxy, server] = await Promise.all([
      startLocalPgBouncer({ server: database, poolMode: 'transaction' }),
      startLocalPgBouncer({ server: database, poolMode: 'session' }),
      TcpProxy.start(database.host, database.port),
      startInstance(),
    ]);
    paths.push(
      { name: 'the direct port', ...database },
      { name: 'PgBouncer in transaction mode', ...transactionPooler },
      { name: 'PgBouncer in session mode', ...sessionPooler },
      { name: 'a TCP proxy', host: '127.0.0.1', port: proxy.port, database: database.database },
    );
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([transactionPooler?.stop(), sessionPooler?.stop(), proxy?.close()]);
    await sql(`DROP TABLE IF EXISTS ${TABLE}`);
  });

  const count = (path: Path) =>
    post(server, path, { sql: `SELECT count(*)::int AS n FROM ${TABLE}`, cache: true });

  const pairs = [0, 1, 2, 3].flatMap((reader) =>
    [0, 1, 2, 3].filter((writer) => writer !== reader).map((writer) => [reader, writer]),
  );

  it.each(pairs)(
    'a write through path %i drops what path %i cached (0 direct, 1 and 2 PgBouncer, 3 proxy)',
    async (reader, writer) => {
      const through = paths[reader]!;
      const first = await count(through);
      expect(first.status).toBe(200);
      const before = first.body.rows?.[0]?.n as number;
      expect((await count(through)).body).toMatchObject({
        cacheStatus: 'hit',
        rows: [{ n: before }],
      });

      const written = await post(server, paths[writer]!, {
        sql: `INSERT INTO ${TABLE} VALUES (1)`,
      });
      expect(written.status).toBe(200);

      expect((await count(through)).body).toMatchObject({
        cacheStatus: 'miss',
        rows: [{ n: before + 1 }],
      });
    },
  );
});

describe('two clusters with one database name, role and password; two instances, one Redis', () => {
  let redis: LocalRedis;
  let first: LocalCluster;
  let second: LocalCluster;
  let proxy: TcpProxy;
  let writerProxy: TcpProxy;
  let one: RunningServer;
  let other: RunningServer;

  beforeAll(async () => {
    [redis, first, second] = await Promise.all([
      startLocalRedis(),
      startLocalCluster({ tls: false }),
      startLocalCluster({ tls: false }),
    ]);
    for (const [cluster, who] of [
      [first, 'first'],
      [second, 'second'],
    ] as const) {
      await onCluster(cluster, `${setUp(TABLE)} INSERT INTO ${TABLE} VALUES (0);`);
      await onCluster(cluster, `ALTER TABLE ${TABLE} ADD COLUMN cluster text DEFAULT '${who}'`);
    }
    [proxy, writerProxy] = await Promise.all([
      TcpProxy.start(first.host, first.port),
      TcpProxy.start(first.host, first.port),
    ]);
    const shared: StartServerOptions = {
      queryCacheRedisUrl: redis.url,
      queryCacheSecret: SHARED_SECRET,
      // Far past any stall of a loaded machine: no answer here is a bypass for want of Redis.
      queryCacheRedisTimeoutMs: 20_000,
      queryCacheRedisInvalidateTimeoutMs: 20_000,
    };
    [one, other] = await Promise.all([startInstance(shared), startInstance(shared)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([one?.close(), other?.close()]);
    await Promise.all([proxy?.close(), writerProxy?.close()]);
    await Promise.all([redis?.stop(), first?.stop(), second?.stop()]);
  });

  const at = (cluster: LocalCluster): Path => ({ name: cluster.connectionString, ...cluster });
  const throughProxy = (port: number): Path => ({
    name: 'the proxy',
    host: '127.0.0.1',
    port,
    database: first.database,
  });
  const read = (server: RunningServer, path: Path) =>
    post(server, path, {
      sql: `SELECT cluster, count(*)::int AS n FROM ${TABLE} GROUP BY cluster`,
      cache: true,
    });

  it("shares one server's entries between the instances, and a write through another path drops them for both", async () => {
    const direct = at(first);
    expect((await read(one, direct)).body).toMatchObject({
      cacheStatus: 'miss',
      rows: [{ cluster: 'first', n: 1 }],
    });
    expect((await read(other, direct)).body).toMatchObject({
      cacheStatus: 'hit',
      rows: [{ cluster: 'first', n: 1 }],
    });

    const written = await post(other, throughProxy(writerProxy.port), {
      sql: `INSERT INTO ${TABLE} VALUES (1)`,
    });
    expect(written.status).toBe(200);

    expect((await read(one, direct)).body).toMatchObject({
      cacheStatus: 'miss',
      rows: [{ cluster: 'first', n: 2 }],
    });
    expect((await read(other, direct)).body).toMatchObject({
      cacheStatus: 'hit',
      rows: [{ cluster: 'first', n: 2 }],
    });
  });

  it('never serves what one cluster answered for another reached at the same address', async () => {
    const sameAddress = throughProxy(proxy.port);
    expect((await read(one, sameAddress)).status).toBe(200);
    expect((await read(one, sameAddress)).body).toMatchObject({
      cacheStatus: 'hit',
      rows: [{ cluster: 'first' }],
    });

    // The address now reaches the second cluster; the other instance has never been there.
    proxy.retarget(second.host, second.port);
    expect((await read(other, sameAddress)).body).toMatchObject({
      cacheStatus: 'miss',
      rows: [{ cluster: 'second', n: 1 }],
    });
  });

  it('asks again which server an address reaches once the connections to the one it reached are gone', async () => {
    const moving = await TcpProxy.start(first.host, first.port);
    try {
      const address = throughProxy(moving.port);
      expect((await read(one, address)).status).toBe(200);
      expect((await read(one, address)).body).toMatchObject({
        cacheStatus: 'hit',
        rows: [{ cluster: 'first' }],
      });

      // The first cluster goes from the address, and with it every connection to it.
      moving.retarget(second.host, second.port);
      const poolId = `127.0.0.1:${moving.port}:${CALLER.user}:${first.database}`;
      await eventually(async () => {
        const { stats } = (await (await fetch(`${one.url}/api/stats/pools`)).json()) as {
          stats: { poolId: string; totalConnections: number }[];
        };
        return stats.every((pool) => pool.poolId !== poolId || pool.totalConnections === 0);
      });

      expect((await read(one, address)).body).toMatchObject({
        cacheStatus: 'miss',
        rows: [{ cluster: 'second', n: 1 }],
      });
    } finally {
      await moving.close();
    }
  });

  it('answers without the cache where the login may not ask the server which database it is', async () => {
    await onCluster(second, 'REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        expect((await read(one, at(second))).body).toMatchObject({
          cacheStatus: 'bypass',
          cacheReason: 'unavailable',
          rows: [{ cluster: 'second', n: 1 }],
        });
      }
      expect((await post(one, at(second), { sql: `SELECT 1 FROM ${TABLE} LIMIT 0` })).status).toBe(
        200,
      );
      // A write runs, and its answer says that nothing could be dropped for it.
      const write = await post(one, at(second), {
        sql: `INSERT INTO ${TABLE} SELECT 1 WHERE false`,
      });
      expect(write.status).toBe(200);
      expect(write.body.warnings).toEqual([UNSCOPED_INVALIDATION_WARNING]);
    } finally {
      await onCluster(second, 'GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC');
    }
  });
});
