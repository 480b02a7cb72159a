/** Logins: a missing password is a refused login, sockets never linger, and no error carries a password. */
import { inspect } from 'node:util';
import { DatabaseError, type ConnectionTarget, orThrow } from '@sqlgate/core';
import { database, testTarget } from './support';
import { createPostgresConnections, type PostgresConnections } from '../src';
import { TcpProxy } from './tcp-proxy';

const target: ConnectionTarget = testTarget('disable');

let connections: PostgresConnections;
beforeEach(() => {
  connections = createPostgresConnections({ connectTimeoutMs: 500 });
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
    const refusal = orThrow(connections.acquire(missing));
    await expect(refusal).rejects.toBeInstanceOf(DatabaseError);
    await expect(refusal).rejects.toMatchObject({
      fields: { code: '28000', message: 'The server requires a password and none was given' },
    });
    await expect(orThrow(connections.check(missing))).rejects.toMatchObject({
      fields: { code: '28000' },
    });
  },
);

it('a login given up without a password closes its socket at once, not after authentication_timeout', async () => {
  const proxy = await TcpProxy.start(database.host, database.port);
  try {
    const viaProxy = { ...target, host: '127.0.0.1', port: proxy.port, password: undefined };
    await expect(orThrow(connections.acquire(viaProxy))).rejects.toMatchObject({
      fields: { code: '28000' },
    });
    await expect(orThrow(connections.check(viaProxy))).rejects.toMatchObject({
      fields: { code: '28000' },
    });
    expect(await until(() => proxy.openLinks === 0, 1000)).toBe(true);
  } finally {
    await proxy.close();
  }
});

it('no error carries the password, not even in its causes or hidden properties', async () => {
  const secret = `${database.password}-not-it`;
  const failures = await Promise.all(
    [
      orThrow(connections.acquire({ ...target, password: secret })),
      orThrow(connections.acquire({ ...target, password: secret, database: 'no_such_database' })),
      orThrow(connections.acquire({ ...target, password: secret, host: '127.0.0.1', port: 1 })),
      orThrow(connections.check({ ...target, password: secret })),
    ].map((attempt) =>
      attempt.then(
        () => undefined,
        (error: unknown) => error,
      ),
    ),
  );
  expect(failures.every((failure) => failure !== undefined)).toBe(true);
  const described = inspect(failures, { showHidden: true, depth: 12 });
  expect(described).not.toContain(secret);
  expect(described).not.toContain(database.password);
});
