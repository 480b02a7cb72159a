/** The throwaway PgBouncer: any client user in front of one server user, the pool mode asked for, nothing left behind. */
import { existsSync } from 'node:fs';
import { Client } from 'pg';
import { startLocalPgBouncer, testDatabaseFromEnvironment, type LocalPgBouncer } from '../src';

const server = testDatabaseFromEnvironment();

/** A client of `bouncer` as `user`, with no password: PgBouncer asks for none. */
async function clientOf(bouncer: LocalPgBouncer, user: string): Promise<Client> {
  const client = new Client({
    host: bouncer.host,
    port: bouncer.port,
    user,
    database: bouncer.database,
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  return client;
}

async function backendOf(client: Client): Promise<number> {
  return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
}

it('lets any user in as the server user, and shares one backend among clients in transaction mode', async () => {
  await using bouncer = await startLocalPgBouncer({ server, poolSize: 1 });
  expect(bouncer.poolMode).toBe('transaction');
  const [alice, bob] = [await clientOf(bouncer, 'alice'), await clientOf(bouncer, 'bob')];
  try {
    const rows = await alice.query('SELECT current_user AS name');
    expect(rows.rows).toEqual([{ name: server.user }]);
    expect(await backendOf(alice)).toBe(await backendOf(bob));
  } finally {
    await Promise.all([alice.end(), bob.end()]);
  }
});

it('keeps a backend per client in session mode', async () => {
  await using bouncer = await startLocalPgBouncer({ server, poolMode: 'session', poolSize: 2 });
  const [alice, bob] = [await clientOf(bouncer, 'alice'), await clientOf(bouncer, 'bob')];
  try {
    await alice.query('SET application_name = alice');
    expect(await backendOf(alice)).not.toBe(await backendOf(bob));
    const kept = await alice.query('SHOW application_name');
    expect(kept.rows).toEqual([{ application_name: 'alice' }]);
  } finally {
    await Promise.all([alice.end(), bob.end()]);
  }
});

it('stops, refusing connections, and removes its directory', async () => {
  const bouncer = await startLocalPgBouncer({ server });
  expect(existsSync(bouncer.logFile)).toBe(true);
  await bouncer.stop();
  await expect(clientOf(bouncer, 'alice')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  expect(existsSync(bouncer.directory)).toBe(false);
  await bouncer.stop();
});
