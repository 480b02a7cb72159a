/**
 * docs/decisions.md 10.20: which database a target reaches, as its server tells it. Learned once
 * per pool by an ordinary login, the same after a restart; a server that will not tell gives no
 * scope (its reads bypass the cache), and its connections serve as before.
 */
import { ConnectionError, orThrow, type ConnectionTarget } from '@sqlgate/core';
import { eventually, startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import { Client } from 'pg';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { SERVER_IDENTITY_SQL, ServerIdentities, type ServerIdentity } from '../src/server-identity';
import { failureOf } from './support';

const IDENTITY: ServerIdentity = { cluster: '7300000000000000001', database: '16384' };
const target: ConnectionTarget = {
  host: 'db.example',
  port: 5432,
  user: 'alice',
  database: 'app',
  sslMode: 'disable',
};

describe('ServerIdentities', () => {
  function identities(learn: () => Promise<ServerIdentity>, clock = { now: 0 }, keptMs = 1_000) {
    const asked: number[] = [];
    const known = new ServerIdentities({
      learn: () => {
        asked.push(clock.now);
        return learn();
      },
      keptMs,
      now: () => clock.now,
    });
    return { known, asked, clock };
  }

  it('asks once for requests that ask together and after, until kept long enough', async () => {
    const { known, asked, clock } = identities(() => Promise.resolve(IDENTITY));
    const together = await Promise.all([1, 2, 3].map(() => known.of('pool', target)));
    expect(together).toEqual([IDENTITY, IDENTITY, IDENTITY]);
    clock.now = 999;
    expect(await known.of('pool', target)).toEqual(IDENTITY);
    expect(asked).toEqual([0]);
    clock.now = 1_000;
    await known.of('pool', target);
    expect(asked).toEqual([0, 1_000]);
  });

  it('keeps it while the pool lasts where connections live for ever (a lifetime of 0)', async () => {
    const { known, asked, clock } = identities(() => Promise.resolve(IDENTITY), { now: 0 }, 0);
    await known.of('pool', target);
    clock.now = 1e12;
    await known.of('pool', target);
    expect(asked).toEqual([0]);
  });

  it('asks again once the pool forgot it, and per pool', async () => {
    const { known, asked } = identities(() => Promise.resolve(IDENTITY));
    await known.of('pool', target);
    await known.of('other pool', target);
    known.forget('pool');
    await known.of('pool', target);
    expect(asked).toHaveLength(3);
  });

  it('does not remember a server it could not reach', async () => {
    let reachable = false;
    const { known, asked } = identities(() =>
      reachable
        ? Promise.resolve(IDENTITY)
        : Promise.reject(new ConnectionError('CONNECTION_FAILED', 'refused', 'ECONNREFUSED')),
    );
    await expect(known.of('pool', target)).rejects.toMatchObject({ systemCode: 'ECONNREFUSED' });
    reachable = true;
    expect(await known.of('pool', target)).toEqual(IDENTITY);
    expect(asked).toHaveLength(2);
  });

  it('remembers for a minute that the server would not tell', async () => {
    const { known, asked, clock } = identities(() =>
      Promise.reject(new ConnectionError('CONNECTION_FAILED', 'no', 'IDENTITY_REFUSED')),
    );
    await expect(known.of('pool', target)).rejects.toBeInstanceOf(ConnectionError);
    clock.now = 59_999;
    await expect(known.of('pool', target)).rejects.toBeInstanceOf(ConnectionError);
    expect(asked).toEqual([0]);
    clock.now = 60_000;
    await expect(known.of('pool', target)).rejects.toBeInstanceOf(ConnectionError);
    expect(asked).toEqual([0, 60_000]);
  });
});

describe('on a real PostgreSQL', () => {
  let cluster: LocalCluster;
  let connections: PostgresConnections;
  const LOGIN = { user: 'identity_plain_login', password: 'plain-login-pw' };
  const OTHER = { user: 'identity_other_login', password: 'other-login-pw' };

  async function asSuperuser<T extends Record<string, unknown>>(text: string): Promise<T[]> {
    const client = new Client(cluster.connectionString);
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  }

  const login = (who: { user: string; password: string }): ConnectionTarget => ({
    host: cluster.host,
    port: cluster.port,
    database: cluster.database,
    sslMode: 'disable',
    ...who,
  });

  /** How often the identity was asked of the server, by any login. */
  async function identityQueries(): Promise<number> {
    const [row] = await asSuperuser<{ calls: number }>(
      `SELECT coalesce(sum(calls), 0)::int AS calls FROM pg_stat_statements
        WHERE query = '${SERVER_IDENTITY_SQL.replace(/'/g, "''")}'`,
    );
    return row!.calls;
  }

  beforeAll(async () => {
    cluster = await startLocalCluster({
      tls: false,
      settings: { shared_preload_libraries: 'pg_stat_statements' },
    });
    await asSuperuser(`CREATE EXTENSION pg_stat_statements;
      CREATE ROLE ${LOGIN.user} LOGIN PASSWORD '${LOGIN.password}';
      CREATE ROLE ${OTHER.user} LOGIN PASSWORD '${OTHER.password}';`);
  }, 60_000);
  afterAll(() => cluster?.stop());
  beforeEach(() => {
    connections = createPostgresConnections();
  });
  afterEach(() => connections.close());

  it('is asked once per pool by an ordinary login, however many scopes are asked', async () => {
    const before = await identityQueries();
    const together = await Promise.all(
      Array.from({ length: 20 }, () => orThrow(connections.scopeOf(login(LOGIN)))),
    );
    for (let request = 0; request < 20; request++) {
      expect(await orThrow(connections.scopeOf(login(LOGIN)))).toEqual(together[0]);
    }
    const other = await orThrow(connections.scopeOf(login(OTHER)));

    expect(new Set(together.map((scope) => JSON.stringify(scope))).size).toBe(1);
    expect(other.database).toBe(together[0]!.database);
    expect(other.credentials).not.toBe(together[0]!.credentials);
    // One pool per login: each asked once.
    expect((await identityQueries()) - before).toBe(2);
  });

  it('is the same after the server restarts, asked again once the pool lost its connections', async () => {
    const before = await orThrow(connections.scopeOf(login(LOGIN)));
    await cluster.restart();
    // The server closed the pool's idle connection on its way down: the pool drops it.
    await eventually(() => connections.poolStats().every((pool) => pool.totalConnections === 0));
    expect(await orThrow(connections.scopeOf(login(LOGIN)))).toEqual(before);
  });

  it('gives no scope where the login may not call pg_control_system(), and lends connections as before', async () => {
    await asSuperuser('REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
    try {
      expect(await failureOf(connections.scopeOf(login(LOGIN)))).toMatchObject({
        systemCode: 'IDENTITY_REFUSED',
      });
      const connection = await orThrow(connections.acquire(login(LOGIN)));
      try {
        const result = await orThrow(
          connection.run('SELECT 1 AS one', { rowMode: 'object', maxRows: 1 }),
        );
        expect(result.rows).toEqual([{ one: 1 }]);
      } finally {
        connection.release();
      }
    } finally {
      await asSuperuser('GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC');
    }
  });
});
