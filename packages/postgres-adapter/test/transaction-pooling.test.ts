/**
 * What sqlgate finds out about whether a target keeps session state between transactions
 * (docs/decisions.md 10.32): against a direct PostgreSQL and real PgBouncers in each pool mode,
 * order and size, with and without other clients' traffic through them, and when what is behind
 * the address changes.
 */
import {
  orThrow,
  type Connection,
  type ConnectionTarget,
  type SessionStateVerdict,
} from '@sqlgate/core';
import {
  eventually,
  startLocalPgBouncer,
  type LocalPgBouncer,
  type PgBouncerPoolMode,
} from '@sqlgate/testing';
import { Client } from 'pg';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { startPoolerTraffic } from './pooler-traffic';
import { database, testTarget } from './support';
import { TcpProxy } from './tcp-proxy';

let connections: PostgresConnections;
beforeEach(() => {
  connections = createPostgresConnections({ max: 2 });
});
afterEach(() => connections.close());

async function verdictOf(target: ConnectionTarget): Promise<SessionStateVerdict | undefined> {
  const connection: Connection = await orThrow(connections.acquire(target));
  try {
    return await connection.sessionStateVerdict?.();
  } finally {
    connection.release();
  }
}

function through(bouncer: LocalPgBouncer): ConnectionTarget {
  return {
    host: bouncer.host,
    port: bouncer.port,
    user: 'prober',
    password: 'any',
    database: bouncer.database,
    sslMode: 'disable',
  };
}

const ROUND_ROBIN = { server_round_robin: '1' };

describe('without other traffic', () => {
  it('keeps it on a direct connection', async () => {
    expect(await verdictOf(testTarget())).toEqual({ kind: 'kept' });
  });

  it.each<[PgBouncerPoolMode, Record<string, string>, number[], SessionStateVerdict['kind']]>([
    ['session', {}, [2, 4], 'kept'],
    ['session', ROUND_ROBIN, [2, 4], 'kept'],
    ['transaction', {}, [1, 2, 4], 'transaction-pooler'],
    ['transaction', ROUND_ROBIN, [1, 2, 4], 'transaction-pooler'],
    ['statement', {}, [1, 4], 'transaction-pooler'],
  ])(
    'behind PgBouncer in %s mode %j of %j server connections: %s',
    async (poolMode, settings, poolSizes, kind) => {
      for (const poolSize of poolSizes) {
        await using bouncer = await startLocalPgBouncer({
          server: database,
          poolMode,
          poolSize,
          settings,
        });
        expect(await verdictOf(through(bouncer))).toEqual({ kind });
        // Known for the pool from then on, whichever of its connections is asked.
        expect(await verdictOf(through(bouncer))).toEqual({ kind });
        await connections.close();
        connections = createPostgresConnections({ max: 2 });
      }
    },
  );

  it('refuses a session pooler whose one server connection the probe holds: nothing else can notify it', async () => {
    await using bouncer = await startLocalPgBouncer({
      server: database,
      poolMode: 'session',
      poolSize: 1,
    });
    expect(await verdictOf(through(bouncer))).toEqual({ kind: 'pooler-unproven' });
  });

  it('probes a pooler it could not show to keep state again a minute later, refusing meanwhile', async () => {
    await using bouncer = await startLocalPgBouncer({
      server: database,
      poolMode: 'session',
      poolSize: 2,
    });
    // Another client holds one of the two server connections: the probe's second one gets none.
    const holder = new Client({ ...through(bouncer), ssl: false });
    await holder.connect();
    await holder.query('SELECT 1');
    const connection = await orThrow(connections.acquire(through(bouncer)));
    try {
      expect(await connection.sessionStateVerdict?.()).toEqual({ kind: 'pooler-unproven' });
      await holder.end();
      expect(await connection.sessionStateVerdict?.()).toEqual({ kind: 'pooler-unproven' });
      const now = performance.now.bind(performance);
      jest.spyOn(performance, 'now').mockImplementation(() => now() + 61_000);
      // A minute later the next request is still refused at once, and a probe runs beside it.
      expect(await connection.sessionStateVerdict?.()).toEqual({ kind: 'pooler-unproven' });
      await eventually(async () => (await connection.sessionStateVerdict?.())?.kind === 'kept');
    } finally {
      jest.restoreAllMocks();
      connection.release();
      await holder.end().catch(() => undefined);
    }
  });
});

/**
 * Other clients' short transactions and lone statements take and give back the pooler's server
 * connections all through each probe. Each attempt is a new pool of its own, so each probes.
 */
describe('while other clients use a transaction pooler', () => {
  const ATTEMPTS = 12;

  it.each<[PgBouncerPoolMode, number, Record<string, string>]>([
    ['transaction', 1, {}],
    ['transaction', 2, {}],
    ['transaction', 4, {}],
    ['transaction', 1, ROUND_ROBIN],
    ['transaction', 2, ROUND_ROBIN],
    ['transaction', 4, ROUND_ROBIN],
    ['statement', 2, {}],
  ])(
    `never takes PgBouncer in %s mode of %i server connections %j for one that keeps state (${ATTEMPTS} probes)`,
    async (poolMode, poolSize, settings) => {
      await using bouncer = await startLocalPgBouncer({
        server: database,
        poolMode,
        poolSize,
        settings,
      });
      const traffic = await startPoolerTraffic(through(bouncer), 2 * poolSize + 2, {
        transactions: poolMode === 'transaction',
      });
      const verdicts: (string | undefined)[] = [];
      const before = traffic.answered;
      try {
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          await connections.close();
          connections = createPostgresConnections({ max: 2, connectTimeoutMs: 1000 });
          verdicts.push((await verdictOf(through(bouncer)))?.kind);
        }
      } finally {
        await traffic.stop();
      }
      expect(traffic.answered).toBeGreaterThan(before);
      // Refused every time: shown to be a transaction pooler, or not shown to keep state.
      const refused = ['transaction-pooler', 'pooler-unproven'];
      expect(verdicts.filter((kind) => !refused.includes(kind ?? ''))).toEqual([]);
    },
    120_000,
  );

  it('still finds a session pooler with server connections to spare', async () => {
    await using bouncer = await startLocalPgBouncer({
      server: database,
      poolMode: 'session',
      poolSize: 8,
    });
    const traffic = await startPoolerTraffic(through(bouncer), 4);
    try {
      expect(await verdictOf(through(bouncer))).toEqual({ kind: 'kept' });
    } finally {
      await traffic.stop();
    }
  });
});

describe('what the address leads to changes', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await TcpProxy.start(database.host, database.port);
  });
  afterEach(() => proxy.close());

  const proxied = (): ConnectionTarget => ({
    ...testTarget(),
    host: '127.0.0.1',
    port: proxy.port,
  });

  it('probes again for a connection opened after a transaction pooler was put in front', async () => {
    await using bouncer = await startLocalPgBouncer({ server: database, poolMode: 'transaction' });
    const direct = await orThrow(connections.acquire(proxied()));
    try {
      expect(await direct.sessionStateVerdict?.()).toEqual({ kind: 'kept' });
      proxy.routeNewConnections({ host: bouncer.host, port: bouncer.port });
      // The first connection is lent: the pool opens a new one, which reaches PgBouncer.
      const pooled = await orThrow(connections.acquire(proxied()));
      try {
        expect(await pooled.sessionStateVerdict?.()).toEqual({ kind: 'transaction-pooler' });
        // From then on for every connection of the pool: a direct one refuses too.
        expect(await direct.sessionStateVerdict?.()).toEqual({ kind: 'transaction-pooler' });
      } finally {
        pooled.release();
      }
    } finally {
      direct.release();
    }
  });

  it('does not know, and says why, while the server does not answer the probe; the next asks again', async () => {
    await connections.close();
    connections = createPostgresConnections({ max: 2, connectTimeoutMs: 1000 });
    const connection = await orThrow(connections.acquire(proxied()));
    try {
      // The pool's connection works; a new one gets no answer.
      proxy.routeNewConnections(undefined);
      const verdict = await connection.sessionStateVerdict?.();
      // Connecting or its first answer, whichever limit the probe met first.
      expect(verdict).toMatchObject({
        kind: 'unknown',
        failure: { code: expect.stringMatching(/^(CONNECT|SERVER)_TIMEOUT$/) },
      });
      expect(
        await orThrow(connection.run('SELECT 1 AS one', { rowMode: 'object', maxRows: 10 })),
      ).toMatchObject({ rows: [{ one: 1 }] });
      proxy.routeNewConnections({ host: database.host, port: database.port });
      expect(await connection.sessionStateVerdict?.()).toEqual({ kind: 'kept' });
    } finally {
      connection.release();
    }
  });
});
