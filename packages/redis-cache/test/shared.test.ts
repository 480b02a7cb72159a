/**
 * Two instances (two RedisCaches, two connections) on one Redis share entries, invalidations,
 * marks and counters; the keys they leave are those of the documented layout, and indexes shrink
 * as entries expire.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import { placeHash } from '../src/key-layout';
import { RedisConnection } from '../src/redis-connection';
import {
  Caches,
  command,
  counts,
  entry,
  eventually,
  freshPrefix,
  keysUnder,
  pause,
  placeA,
  placeB,
} from './support';

/** Generous: these tests are about sharing, not speed, and CI machines are loaded. */
const TIMEOUT = { commandTimeoutMs: 1000 };

let redis: LocalRedis;
const caches = new Caches();

beforeAll(async () => {
  redis = await startLocalRedis();
}, 30_000);
afterEach(() => caches.closeAll());
afterAll(() => redis?.stop());

/** Two instances sharing one prefix. */
function twoInstances() {
  const prefix = freshPrefix('shared');
  return [
    caches.make(redis.url, { prefix, ...TIMEOUT }),
    caches.make(redis.url, { prefix, ...TIMEOUT }),
  ] as const;
}

describe('two instances on one Redis', () => {
  it('see each other’s entries, hits, size and recent entries', async () => {
    const [a, b] = twoInstances();
    await a.store.set(entry('k1'), 60_000);
    await b.store.set(entry('k2', placeB), 60_000);

    expect((await a.store.get('k2'))?.hits).toBe(1);
    expect((await b.store.get('k2'))?.hits).toBe(2);
    expect(await a.store.size()).toBe(2);
    expect((await b.store.recent(10)).map((each) => each.key)).toEqual(['k2', 'k1']);
  });

  it('see each other’s invalidations, by database and by server', async () => {
    const [a, b] = twoInstances();
    await a.store.set(entry('k1', placeA), 60_000);
    await a.store.set(entry('k2', placeB), 60_000);

    expect(await b.store.invalidate({ scope: placeA.scope }, null)).toBe(1);
    expect(await a.store.get('k1')).toBeUndefined();
    expect(await a.store.get('k2')).toBeDefined();

    expect(await b.store.invalidate({ server: placeB.server }, ['t'])).toBe(1);
    expect(await a.store.get('k2')).toBeUndefined();
  });

  it('refuse, on one instance, an entry marked on the other before an invalidation there', async () => {
    const [a, b] = twoInstances();
    const markOnA = await a.store.mark(placeA);
    expect(await b.store.mark(placeA)).toBe(markOnA);

    await a.store.invalidate({ scope: placeA.scope }, null);

    expect(await b.store.set(entry('k1'), 60_000, markOnA)).toBe(false);
    expect(await a.store.set(entry('k1'), 60_000, markOnA)).toBe(false);
    expect(await b.store.set(entry('k1'), 60_000, await a.store.mark(placeA))).toBe(true);
  });

  it('add up their counters', async () => {
    const [a, b] = twoInstances();
    a.counters.add(counts(2, 3, 1.5));
    b.counters.add(counts(1, 1, 0.25));

    // totals() sends this instance's pending counts first; the other's arrive within its flush.
    expect(await a.counters.totals()).toMatchObject({ hits: 2, misses: 3 });
    await eventually(async () => {
      expect(await a.counters.totals()).toEqual({
        hits: 3,
        misses: 4,
        executed: 4,
        executionMs: 1.75,
      });
    });
    expect(await b.counters.totals()).toEqual(await a.counters.totals());
  });

  it('keep clear’s effect to the entries: the other instance’s marks still hold', async () => {
    const [a, b] = twoInstances();
    await a.store.set(entry('k1'), 60_000);
    const mark = await b.store.mark(placeA);

    await a.store.clear();

    expect(await b.store.get('k1')).toBeUndefined();
    expect(await b.store.set(entry('k1'), 60_000, mark)).toBe(true);
  });
});

describe('large entries', () => {
  it('are listed by recent() without their rows', async () => {
    // The wire size below is the proof; the default 50 ms bound is too tight for a loaded host.
    const cache = caches.make(redis.url, TIMEOUT);
    const rows = [{ text: 'x'.repeat(1000 * 1000) }];
    for (let index = 0; index < 10; index += 1) {
      const big = entry(`big-${index}`);
      await cache.store.set(
        { ...big, result: { ...big.result, rows }, sizeBytes: 1_000_020 },
        60_000,
      );
    }

    const scripts = jest.spyOn(RedisConnection.prototype, 'script');
    const listed = await cache.store.recent(10);
    const reply = await scripts.mock.results.at(-1)?.value;
    scripts.mockRestore();

    expect(listed.map((each) => each.key)).toHaveLength(10);
    // Ten summaries came over the wire, not ten megabytes of rows.
    expect(JSON.stringify(reply).length).toBeLessThan(10_000);
  });
});

describe('invalidating many entries', () => {
  it.each([
    ['a database', { scope: placeA.scope }],
    ['a server', { server: placeA.server }],
  ])(
    'drops every entry of %s in batches, so Redis serves others between them',
    async (_what, where) => {
      const cache = caches.make(redis.url, TIMEOUT);
      for (let index = 0; index < 1200; index += 1) {
        await cache.store.set(entry(`many-${index}`, index % 2 === 0 ? placeA : placeB), 60_000);
      }
      const scripts = jest.spyOn(RedisConnection.prototype, 'script');

      const removed = await cache.store.invalidate(where, null);
      const calls = scripts.mock.calls.filter(([name]) =>
        String(name).startsWith('sqlgateInvalidate'),
      );
      scripts.mockRestore();

      const expected = 'server' in where ? 1200 : 600;
      expect(removed).toBe(expected);
      expect(calls.length).toBeGreaterThanOrEqual(Math.ceil(expected / 500));
      expect(await cache.store.size()).toBe(1200 - expected);
      expect(await cache.store.get('many-0')).toBeUndefined();
    },
  );
});

describe('keys in Redis', () => {
  it('are those of the documented layout, and clear() leaves only generations, epoch and counters', async () => {
    const cache = caches.make(redis.url, TIMEOUT);
    const prefix = freshPrefix('layout');
    const laidOut = caches.make(redis.url, { prefix, ...TIMEOUT });
    await laidOut.store.set(entry('k1', placeA), 60_000);
    await laidOut.store.set(entry('k2', placeB), 60_000);
    await laidOut.store.invalidate({ scope: placeB.scope }, null);
    laidOut.counters.add(counts(1, 0));
    await laidOut.counters.totals();
    await cache.store.set(entry('elsewhere'), 60_000);

    const a = placeHash(placeA.scope);
    const b = placeHash(placeB.scope);
    const server = placeHash(placeA.server);
    const layout = [
      `${prefix}e:k1`,
      `${prefix}epoch`,
      `${prefix}g:d:${b}`,
      `${prefix}i:all`,
      `${prefix}i:bytes`,
      `${prefix}i:d:${a}`,
      `${prefix}i:dbs`,
      `${prefix}i:recent`,
      `${prefix}i:s:${server}`,
      `${prefix}i:servers`,
      `${prefix}i:size`,
      `${prefix}stats`,
    ];
    const keys = await keysUnder(redis.port, prefix);
    expect(keys.filter((key) => !key.startsWith(`${prefix}stats:applied:`))).toEqual(layout);
    expect(keys.filter((key) => key.startsWith(`${prefix}stats:applied:`))).toHaveLength(1);
    expect(await command(redis.port, 'TTL', `${prefix}e:k1`)).toBeGreaterThan(0);
    expect(await command(redis.port, 'TTL', `${prefix}epoch`)).toBe(-1);

    await laidOut.store.clear();

    expect(
      (await keysUnder(redis.port, prefix)).filter((key) => !key.includes('stats:applied:')),
    ).toEqual([`${prefix}epoch`, `${prefix}g:d:${b}`, `${prefix}stats`]);
    // Another prefix's entries are not touched.
    expect(await cache.store.get('elsewhere')).toBeDefined();
  });

  it('treat glob characters in the prefix as plain text', async () => {
    const [star, other] = [
      caches.make(redis.url, { prefix: 'glob*:', ...TIMEOUT }),
      caches.make(redis.url, { prefix: 'glob-other:', ...TIMEOUT }),
    ];
    await star.store.set(entry('k'), 60_000);
    await other.store.set(entry('k'), 60_000);

    await star.store.clear();

    expect(await star.store.get('k')).toBeUndefined();
    expect(await other.store.get('k')).toBeDefined();
  });

  it('do not grow with expired entries: indexes are swept as entries expire', async () => {
    const prefix = freshPrefix('sweep');
    const cache = caches.make(redis.url, { prefix, ...TIMEOUT });
    for (let index = 0; index < 40; index++) {
      const place = { scope: `db-${index % 10}`, server: `server-${index % 3}` };
      await cache.store.set(entry(`short-${index}`, place), 100);
    }
    await pause(150);
    await cache.store.set(entry('long'), 60_000);

    expect(await cache.store.usage?.()).toEqual({ entries: 1, bytes: 20, evictions: 0 });
    const keys = await keysUnder(redis.port, prefix);
    expect(keys.filter((key) => key.includes(':e:'))).toEqual([`${prefix}e:long`]);
    expect(keys.filter((key) => key.includes(':i:d:'))).toHaveLength(1);
    expect(keys.filter((key) => key.includes(':i:s:'))).toHaveLength(1);
    for (const index of ['all', 'recent', 'size', 'dbs', 'servers']) {
      const size = await command(
        redis.port,
        index === 'size' ? 'HLEN' : 'ZCARD',
        `${prefix}i:${index}`,
      );
      expect([index, size]).toEqual([index, 1]);
    }
  });
});

describe('entries', () => {
  it('over maxEntryBytes are refused, and remove the older entry under the key', async () => {
    const cache = caches.make(redis.url, { maxEntryBytes: 2000, ...TIMEOUT });
    await cache.store.set(entry('k'), 60_000);
    const big = entry('k');
    big.result.rows = [{ text: 'x'.repeat(2000) }];

    expect(await cache.store.set(big, 60_000)).toBe(false);
    expect(await cache.store.get('k')).toBeUndefined();
  });

  it('that cannot be decoded (another format, damaged) are a miss', async () => {
    const prefix = freshPrefix('damaged');
    const cache = caches.make(redis.url, { prefix, ...TIMEOUT });
    await cache.store.set(entry('k'), 60_000);
    await command(redis.port, 'HSET', `${prefix}e:k`, 'r', '[99,{}]', 'q', '{damaged');

    expect(await cache.store.get('k')).toBeUndefined();
    expect(await cache.store.recent(10)).toEqual([]);
  });

  it('of a database whose generation moved without them (an index lost) are not served', async () => {
    const prefix = freshPrefix('orphan');
    const cache = caches.make(redis.url, { prefix, ...TIMEOUT });
    await cache.store.set(entry('k'), 60_000);
    // As if an invalidation had run while the entry was missing from its database's index.
    await command(redis.port, 'INCR', `${prefix}g:d:${placeHash(placeA.scope)}`);

    expect(await cache.store.recent(10)).toEqual([]);
    expect(await cache.store.get('k')).toBeUndefined();
    expect(await cache.store.size()).toBe(0);
  });
});

describe('a user restricted by ACL', () => {
  it('can make every call with the permissions the README lists', async () => {
    const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const block = /Permissions[\s\S]*?```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = block.split(/\s+/).filter((word) => word.startsWith('+'));
    expect(commands.length).toBeGreaterThan(20);
    const prefix = freshPrefix('acl');
    const user = `readme${Date.now()}`;
    await command(
      redis.port,
      'ACL',
      'SETUSER',
      user,
      'on',
      '>pw',
      `~${prefix}*`,
      '-@all',
      ...commands,
    );
    const cache = caches.make(`redis://${user}:pw@127.0.0.1:${redis.port}/0`, {
      prefix,
      ...TIMEOUT,
    });

    await eventually(async () => {
      await cache.store.size();
    });
    const mark = await cache.store.mark(placeA);
    expect(await cache.store.set(entry('k'), 60_000, mark)).toBe(true);
    expect(await cache.store.get('k')).toBeDefined();
    expect(await cache.store.recent(5)).toHaveLength(1);
    expect(await cache.store.usage?.()).toMatchObject({ entries: 1 });
    expect(await cache.store.invalidate({ server: placeA.server }, null)).toBe(1);
    await cache.store.clear();
    cache.counters.add(counts(1, 1));
    expect(await cache.counters.totals()).toMatchObject({ hits: 1, misses: 1 });
  });
});

describe('options', () => {
  it.each([
    [{ url: 'http://localhost' }, /url/],
    [{ url: 'redis://x', commandTimeoutMs: 0 }, /commandTimeoutMs/],
    [{ url: 'redis://x', counterFlushMs: -1 }, /counterFlushMs/],
    [{ url: 'redis://x', maxEntryBytes: Number.NaN }, /maxEntryBytes/],
  ])('refuses %p', (options, message) => {
    expect(() => caches.make(options.url, options)).toThrow(message);
  });
});
