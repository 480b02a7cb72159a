/** Logins: a missing password is a refused login, sockets never linger, and no error carries a password. */
import { inspect } from 'node:util';
import { DatabaseError, type ConnectionTarget } from '@sqlgate/core';
import { database, testTarget, failureOf } from './support';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { TcpProxy } from './tcp-proxy';

const target: ConnectionTarget = testTarget('disable');

let connections: PostgresConnections;
beforeEach(() => {
  // A login with SCRAM takes a loaded machine well over half a second at times.
  connections = createPostgresConnections({ connectTimeoutMs: 30_000 });
});
afterEach(() => connections.close());

async function until(condition: () => boolean, withinMs: number): Promise<boolean> {
  for (let waited = 0; !condition() && waited < withinMs; waited += 10)
    await new Promise((r) => setTimeout(r, 10));
  return condition();
}

it.each([
  ['absent', undefined],
  ['empty', ''],
])(
  'a password the server asks for but the caller left %s: a refused login (28000), not a broken connection',
  async (_, password) => {
    const missing = { ...target, password } as ConnectionTarget;
    const refusal = await failureOf(connections.acquire(missing));
    expect(refusal).toBeInstanceOf(DatabaseError);
    expect(refusal).toMatchObject({
      fields: { code: '28000', message: 'The server requires a password and none was given' },
    });
    expect(await failureOf(connections.check(missing))).toMatchObject({
      fields: { code: '28000' },
    });
  },
);

it('a login given up without a password closes its socket at once, not after authentication_timeout', async () => {
  const proxy = await TcpProxy.start(database.host, database.port);
  try {
    const viaProxy = { ...target, host: '127.0.0.1', port: proxy.port, password: undefined };
    expect(await failureOf(connections.acquire(viaProxy))).toMatchObject({
      fields: { code: '28000' },
    });
    expect(await failureOf(connections.check(viaProxy))).toMatchObject({
      fields: { code: '28000' },
    });
    // Well before the server's authentication_timeout (60 s) would close it.
    expect(await until(() => proxy.openLinks === 0, 30_000)).toBe(true);
  } finally {
    await proxy.close();
  }
});

it('no error carries the password, not even in its causes or hidden properties', async () => {
  const secret = `${database.password}-not-it`;
  const failures = await Promise.all([
    failureOf(connections.acquire({ ...target, password: secret })),
    failureOf(connections.acquire({ ...target, password: secret, database: 'no_such_database' })),
    failureOf(connections.acquire({ ...target, password: secret, host: '127.0.0.1', port: 1 })),
    failureOf(connections.check({ ...target, password: secret })),
  ]);
  expect(failures.every((failure) => failure !== undefined)).toBe(true);
  const described = inspect(failures, { showHidden: true, depth: 12 });
  expect(described).not.toContain(secret);
  expect(described).not.toContain(database.password);
});

it('a target object changed after use never borrows the connection its old password opened', async () => {
  // One object, reused by a careless embedder: first right, then with a wrong password.
  const reused: ConnectionTarget = { ...target };
  const first = await connections.acquire(reused);
  expect(first.ok).toBe(true);
  if (first.ok) first.value.release();
  reused.password = `${database.password}-wrong`;
  const refusal = await failureOf(connections.acquire(reused));
  expect(refusal).toBeInstanceOf(DatabaseError);
  expect(refusal).toMatchObject({ fields: { code: '28P01' } });
  // And back: the right password finds its pool again.
  reused.password = database.password;
  const again = await connections.acquire(reused);
  expect(again.ok).toBe(true);
  if (again.ok) again.value.release();
  expect(connections.poolStats()).toEqual([
    expect.objectContaining({ totalConnections: 1, idleConnections: 1 }),
  ]);
});
