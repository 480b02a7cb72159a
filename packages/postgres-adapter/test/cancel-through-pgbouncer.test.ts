/**
 * A CancelRequest through a real PgBouncer in transaction mode: PgBouncer forwards it to the
 * backend running the client connection's statement, and goes on serving.
 */
import { randomBytes } from 'node:crypto';
import { orThrow, type RunOptions } from '@sqlgate/core';
import { startLocalPgBouncer, type LocalPgBouncer } from '@sqlgate/testing';
import { Client } from 'pg';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { database, failureOf } from './support';

const options: RunOptions = { rowMode: 'object', maxRows: 10 };
const CANCELS = 10;

let bouncer: LocalPgBouncer;
let connections: PostgresConnections;
let observer: Client;
beforeAll(async () => {
  bouncer = await startLocalPgBouncer({ server: database, poolMode: 'transaction', poolSize: 2 });
  connections = createPostgresConnections({ max: 2 });
  observer = new Client({ ...database, ssl: false });
  await observer.connect();
});
afterAll(async () => {
  await observer?.end();
  await connections?.close();
  await bouncer?.stop();
});

/** Resolves once the server shows `marker`'s statement running (read directly, not through PgBouncer). */
async function running(marker: string): Promise<void> {
  for (;;) {
    const { rows } = await observer.query(
      "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1",
      [`%${marker}%`],
    );
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it('stops the statement each time, and PgBouncer serves on', async () => {
  const target = {
    host: bouncer.host,
    port: bouncer.port,
    user: 'canceller',
    password: 'any',
    database: bouncer.database,
    sslMode: 'disable' as const,
  };
  for (let attempt = 0; attempt < CANCELS; attempt++) {
    const connection = await orThrow(connections.acquire(target));
    try {
      const marker = `cancelled_${randomBytes(6).toString('hex')}`;
      // Long enough to be cancelled, short enough that a lost cancel fails the test, not its timeout.
      const sleeping = connection.run(`SELECT pg_sleep(1) AS ${marker}`, options);
      await running(marker);
      await connection.cancel();
      expect(await failureOf(sleeping)).toMatchObject({ fields: { code: '57014' } });
      const after = await orThrow(connection.run('SELECT 1 AS one', options));
      expect(after.rows).toEqual([{ one: 1 }]);
    } finally {
      connection.release();
    }
  }
}, 30_000);
