/** docs/decisions.md 10.20: the cache scope names the database reached, not how it was spelled. */
import type { CacheScope, ConnectionTarget } from '@sqlgate/core';
import { CacheScopes, canonicalAddress } from '../src/cache-scope';

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

describe('canonicalAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.0.1.1', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.5', '10.0.0.5'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['10.0.0.5', '10.0.0.5'],
  ])('%s is %s', (address, canonical) => {
    expect(canonicalAddress(address)).toBe(canonical);
  });
});

describe('CacheScopes', () => {
  it('gives every spelling of one server the same database scope', async () => {
    const { resolve } = resolver({ 'db.example': '10.0.0.5', localhost: '::1' });
    const scopes = new CacheScopes({ resolve });
    const byName = await scopes.scopeOf(target);
    expect(await scopes.scopeOf({ ...target, host: '10.0.0.5' })).toEqual(byName);
    expect(await scopes.scopeOf({ ...target, host: 'DB.Example', sslMode: 'disable' })).toEqual(
      byName,
    );
    const loopback = await scopes.scopeOf({ ...target, host: 'localhost' });
    const ipv4Loopback = await scopes.scopeOf({ ...target, host: '127.0.0.1' });
    expect(ipv4Loopback.database).toEqual(loopback.database);
    expect(ipv4Loopback.server).toEqual(loopback.server);
    expect(loopback.database).not.toEqual(byName.database);
  });

  it('counts every spelling of this machine as loopback for invalidation: 0.0.0.0, ::, mapped forms', async () => {
    const scopes = new CacheScopes({ resolve: resolver({}).resolve });
    const loopback = await scopes.scopeOf({ ...target, host: '127.0.0.1' });
    for (const host of ['0.0.0.0', '::', '::ffff:7f00:1', '::ffff:127.0.0.1', '127.1.2.3', '::1']) {
      expect({ host, database: (await scopes.scopeOf({ ...target, host })).database }).toEqual({
        host,
        database: loopback.database,
      });
    }
    const mapped = await scopes.scopeOf({ ...target, host: '::ffff:7f00:1' });
    expect(mapped.endpoint).toBe(loopback.endpoint);
  });

  it('serves entries only to the exact address: each loopback address is an endpoint of its own', async () => {
    const scopes = new CacheScopes({ resolve: resolver({ localhost: '127.0.0.1' }).resolve });
    const first = await scopes.scopeOf({ ...target, host: '127.0.0.1' });
    const byName = await scopes.scopeOf({ ...target, host: 'localhost' });
    const second = await scopes.scopeOf({ ...target, host: '127.0.0.2' });
    const ipv6 = await scopes.scopeOf({ ...target, host: '::1' });

    expect(byName.endpoint).toBe(first.endpoint);
    expect(second.endpoint).not.toBe(first.endpoint);
    expect(ipv6.endpoint).not.toBe(first.endpoint);
    // Invalidated together all the same: one machine may serve on all of them.
    expect(new Set([first.database, second.database, ipv6.database]).size).toBe(1);
  });

  it('tells apart ports, databases and credentials', async () => {
    const scopes = new CacheScopes({ resolve: resolver({ 'db.example': '10.0.0.5' }).resolve });
    const base = await scopes.scopeOf(target);
    const otherPort = await scopes.scopeOf({ ...target, port: 5433 });
    expect(otherPort.server).not.toBe(base.server);
    const otherDatabase = await scopes.scopeOf({ ...target, database: 'other' });
    expect(otherDatabase.server).toBe(base.server);
    expect(otherDatabase.database).not.toBe(base.database);
    const otherUser = await scopes.scopeOf({ ...target, user: 'bob' });
    expect(otherUser.database).toBe(base.database);
    expect(otherUser.credentials).not.toBe(base.credentials);
    const otherPassword = await scopes.scopeOf({ ...target, password: 'guess' });
    expect(otherPassword.credentials).not.toBe(base.credentials);
    expect(JSON.stringify(base)).not.toContain('secret');
  });

  it('identifies a policy-checked target by the address it connects to, without resolving', async () => {
    const names = resolver({});
    const scopes = new CacheScopes({ resolve: names.resolve });
    const pinned = await scopes.scopeOf({ ...target, address: '10.0.0.5' });
    expect(pinned).toEqual(await scopes.scopeOf({ ...target, host: '10.0.0.5' }));
    expect(names.calls).toEqual([]);
  });

  it('remembers a resolved name briefly, then asks again', async () => {
    let now = 1_000;
    const names = resolver({ 'db.example': '10.0.0.5' });
    const scopes = new CacheScopes({ resolve: names.resolve, ttlMs: 100, now: () => now });
    const first = await scopes.scopeOf(target);
    await scopes.scopeOf(target);
    expect(names.calls).toHaveLength(1);
    names.answers['db.example'] = '10.0.0.6';
    now += 101;
    expect((await scopes.scopeOf(target)).server).not.toBe(first.server);
    expect(names.calls).toHaveLength(2);
  });

  it('rejects with a ConnectionError for a name that does not resolve, and does not remember it', async () => {
    const names = resolver({});
    const scopes = new CacheScopes({ resolve: names.resolve });
    await expect(scopes.scopeOf(target)).rejects.toMatchObject({ systemCode: 'ENOTFOUND' });
    names.answers['db.example'] = '10.0.0.5';
    await expect(scopes.scopeOf(target)).resolves.toBeDefined();
  });
});

describe('remembered scopes', () => {
  it('are those computed afresh, and never shared by targets whose fields differ', async () => {
    const { resolve } = resolver({ 'db.example': '10.0.0.5' });
    const scopes = new CacheScopes({ resolve });
    const twins: ConnectionTarget[] = [
      { ...target, user: 'a', password: 'b\u0000c' },
      { ...target, user: 'a\u0000b', password: 'c' },
      { ...target, user: 'a', password: undefined },
      { ...target, user: 'a', password: '' },
      { ...target, database: 'app\u0000alice' },
    ];
    const first = await Promise.all(twins.map((t) => scopes.scopeOf(t)));
    const again = await Promise.all(twins.map((t) => scopes.scopeOf(t)));
    const fresh = await Promise.all(twins.map((t) => new CacheScopes({ resolve }).scopeOf(t)));
    expect(again).toEqual(first);
    // A fresh instance has a key of its own: compare what does not depend on it.
    const withoutCredentials = (scope: CacheScope) => ({ ...scope, credentials: undefined });
    expect(first.map(withoutCredentials)).toEqual(fresh.map(withoutCredentials));
    expect(new Set(first.map((scope) => JSON.stringify(scope))).size).toBe(twins.length);
  });
});
