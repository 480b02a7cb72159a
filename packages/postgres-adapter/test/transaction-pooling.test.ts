/**
 * Whether a target keeps session state between transactions (docs/decisions.md 10.32), against a
 * direct PostgreSQL and real PgBouncers in each pool mode and order.
 */
import { orThrow, type Connection, type ConnectionTarget } from '@sqlgate/core';
import { startLocalPgBouncer, type PgBouncerPoolMode } from '@sqlgate/testing';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { database, testTarget } from './support';

let connections: PostgresConnections;
beforeEach(() => {
  connections = createPostgresConnections({ max: 2 });
});
afterEach(() => connections.close());

async function keepsSessionState(target: ConnectionTarget): Promise<boolean | undefined> {
  const connection: Connection = await orThrow(connections.acquire(target));
  try {
    return await connection.keepsSessionState?.();
  } finally {
    connection.release();
  }
}

it('keeps it on a direct connection', async () => {
  expect(await keepsSessionState(testTarget())).toBe(true);
});

it.each<[PgBouncerPoolMode, Record<string, string>, boolean]>([
  ['session', {}, true],
  ['session', { server_round_robin: '1' }, true],
  ['transaction', {}, false],
  ['transaction', { server_round_robin: '1' }, false],
  ['statement', {}, false],
])(
  'behind PgBouncer in %s mode %j: %s',
  async (poolMode, settings, kept) => {
    for (const poolSize of [1, 4]) {
      await using bouncer = await startLocalPgBouncer({
        server: database,
        poolMode,
        poolSize,
        settings,
      });
      const target: ConnectionTarget = {
        host: bouncer.host,
        port: bouncer.port,
        user: 'prober',
        password: 'any',
        database: bouncer.database,
        sslMode: 'disable',
      };
      expect(await keepsSessionState(target)).toBe(kept);
      // Known for the pool from then on, whichever of its connections is asked.
      expect(await keepsSessionState(target)).toBe(kept);
      await connections.close();
      connections = createPostgresConnections({ max: 2 });
    }
    // A session pooler of one backend, which the probed connection holds: the probe's second
    // client waits for the probe's step limit.
  },
  20_000,
);
