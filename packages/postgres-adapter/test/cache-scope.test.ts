/**
 * docs/decisions.md 10.20: the cache scope names the database its server says was reached, and
 * serves entries through the endpoint they were read through, not through a spelling of it. The
 * server's answer is the test's own here; server-identity.test.ts and the HTTP app's
 * cache-server-identity.test.ts ask real servers.
 */
import type { CacheScope, ConnectionTarget } from '@sqlgate/core';
import { CacheScopes, type CacheScopesOptions } from '../src/cache-scope';
import type { ServerIdentity } from '../src/server-identity';

const target: ConnectionTarget = {
  host: 'db.example',
  port: 5432,
  user: 'alice',
  password: 'secret',
  database: 'app',
  sslMode: 'prefer',
};

/** A resolver whose answers the test sets, counting its calls. */
function resolver(answers: Record<string, string>) {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<string> => {
    calls.push(host);
    const address = answers[host];
    if (address === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return address;
  };
  return { resolve, calls, answers };
}

/** One server, one database, whatever the target: what a server behind every address would say. */
const ONE_DATABASE: ServerIdentity = { cluster: '7300000000000000001', database: '16384' };

function scopesWith(
  options: Partial<CacheScopesOptions> = {},
  identify: CacheScopesOptions['identify'] = () => Promise.resolve(ONE_DATABASE),
): CacheScopes {
  return new CacheScopes({ resolve: resolver({}).resolve, identify, ...options });
}

describe('CacheScopes', () => {
  it('names the database by what its server says, whatever address, port or name reached it', async () => {
    const scopes = scopesWith({ resolve: resolver({ 'db.example': '10.0.0.5' }).resolve });
    const reached = await Promise.all([
      scopes.scopeOf(target),
      scopes.scopeOf({ ...target, host: '127.0.0.1', port: 6432 }),
      scopes.scopeOf({ ...target, host: '::1', port: 15432, database: 'pooled_alias' }),
    ]);
    expect(new Set(reached.map((scope) => scope.database)).size).toBe(1);
    expect(new Set(reached.map((scope) => scope.server)).size).toBe(1);
    // Served only through the endpoint read through: a pooler may log in as another user.
    expect(new Set(reached.map((scope) => scope.endpoint)).size).toBe(3);
  });

  it('never gives two servers or two databases one scope, whatever the address', async () => {
    let answer: ServerIdentity = ONE_DATABASE;
    const scopes = scopesWith({}, () => Promise.resolve(answer));
    const first = await scopes.scopeOf({ ...target, host: '127.0.0.1' });
    answer = { ...ONE_DATABASE, cluster: '7300000000000000002' };
    const otherServer = await scopes.scopeOf({ ...target, host: '127.0.0.1' });
    answer = { ...ONE_DATABASE, database: '16385' };
    const otherDatabase = await scopes.scopeOf({ ...target, host: '127.0.0.1' });

    expect(otherServer.server).not.toBe(first.server);
    expect(otherServer.database).not.toBe(first.database);
    expect(otherServer.endpoint).not.toBe(first.endpoint);
    expect(otherDatabase.server).toBe(first.server);
    expect(otherDatabase.database).not.toBe(first.database);
    expect(otherDatabase.endpoint).not.toBe(first.endpoint);
  });

  it('serves through one endpoint every spelling of its address, never another loopback address', async () => {
    const scopes = scopesWith({
      resolve: resolver({ 'db.example': '10.0.0.5', localhost: '127.0.0.1' }).resolve,
    });
    const byName = await scopes.scopeOf(target);
    expect(await scopes.scopeOf({ ...target, host: '10.0.0.5' })).toEqual(byName);
    expect(await scopes.scopeOf({ ...target, host: 'DB.Example', sslMode: 'disable' })).toEqual(
      byName,
    );
    const loopback = await scopes.scopeOf({ ...target, host: 'localhost' });
    for (const host of ['127.0.0.1', '::ffff:7f00:1', '::ffff:127.0.0.1']) {
      expect({ host, endpoint: (await scopes.scopeOf({ ...target, host })).endpoint }).toEqual({
        host,
        endpoint: loopback.endpoint,
      });
    }
    for (const host of ['127.0.0.2', '::1', '0:0:0:0:0:0:0:1']) {
      expect((await scopes.scopeOf({ ...target, host })).endpoint).not.toBe(loopback.endpoint);
    }
  });

  it('tells apart the endpoints of ports and database names, and credentials', async () => {
    const scopes = scopesWith({ resolve: resolver({ 'db.example': '10.0.0.5' }).resolve });
    const base = await scopes.scopeOf(target);
    const otherPort = await scopes.scopeOf({ ...target, port: 5433 });
    expect(otherPort.endpoint).not.toBe(base.endpoint);
    const otherName = await scopes.scopeOf({ ...target, database: 'other' });
    expect(otherName.endpoint).not.toBe(base.endpoint);
    const otherUser = await scopes.scopeOf({ ...target, user: 'bob' });
    expect(otherUser.database).toBe(base.database);
    expect(otherUser.credentials).not.toBe(base.credentials);
    const otherPassword = await scopes.scopeOf({ ...target, password: 'guess' });
    expect(otherPassword.credentials).not.toBe(base.credentials);
    expect(JSON.stringify(base)).not.toContain('secret');
  });

  it('identifies a policy-checked target by the address it connects to, without resolving', async () => {
    const names = resolver({});
    const scopes = scopesWith({ resolve: names.resolve });
    const pinned = await scopes.scopeOf({ ...target, address: '10.0.0.5' });
    expect(pinned).toEqual(await scopes.scopeOf({ ...target, host: '10.0.0.5' }));
    expect(names.calls).toEqual([]);
  });

  it('remembers a resolved name briefly, then asks again', async () => {
    let now = 1_000;
    const names = resolver({ 'db.example': '10.0.0.5' });
    const scopes = scopesWith({ resolve: names.resolve, ttlMs: 100, now: () => now });
    const first = await scopes.scopeOf(target);
    await scopes.scopeOf(target);
    expect(names.calls).toHaveLength(1);
    names.answers['db.example'] = '10.0.0.6';
    now += 101;
    expect((await scopes.scopeOf(target)).endpoint).not.toBe(first.endpoint);
    expect(names.calls).toHaveLength(2);
  });

  it('rejects with a ConnectionError for a name that does not resolve, and does not remember it', async () => {
    const names = resolver({});
    const scopes = scopesWith({ resolve: names.resolve });
    await expect(scopes.scopeOf(target)).rejects.toMatchObject({ systemCode: 'ENOTFOUND' });
    names.answers['db.example'] = '10.0.0.5';
    await expect(scopes.scopeOf(target)).resolves.toBeDefined();
  });
});

describe('remembered scopes', () => {
  it('are those computed afresh, and never shared by targets whose fields differ', async () => {
    const { resolve } = resolver({ 'db.example': '10.0.0.5' });
    const scopes = scopesWith({ resolve });
    const twins: ConnectionTarget[] = [
      { ...target, user: 'a', password: 'b\u0000c' },
      { ...target, user: 'a\u0000b', password: 'c' },
      { ...target, user: 'a', password: undefined },
      { ...target, user: 'a', password: '' },
      { ...target, database: 'app\u0000alice' },
    ];
    const first = await Promise.all(twins.map((t) => scopes.scopeOf(t)));
    const again = await Promise.all(twins.map((t) => scopes.scopeOf(t)));
    const fresh = await Promise.all(twins.map((t) => scopesWith({ resolve }).scopeOf(t)));
    expect(again).toEqual(first);
    // A fresh instance has a key of its own: compare what does not depend on it.
    const withoutCredentials = (scope: CacheScope) => ({ ...scope, credentials: undefined });
    expect(first.map(withoutCredentials)).toEqual(fresh.map(withoutCredentials));
    expect(new Set(first.map((scope) => JSON.stringify(scope))).size).toBe(twins.length);
  });
});
