/**
 * What the Redis cache does when Redis fails: every call settles within commandTimeoutMs whether
 * Redis is gone, frozen or refusing, nothing is lost or counted twice, and it recovers by itself.
 * A call on a frozen Redis must fail with the bound's own error: that, not a measured time, shows
 * that the bound ended it (a time would depend on the machine's load).
 */
import { createServer, connect } from 'node:net';
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import { RedisCacheUnavailableError, type RedisCache, type RedisCacheOptions } from '../src';
import { placeHash } from '../src/key-layout';
import { ResultCache, type CacheScope } from '@sqlgate/core';
import {
  Caches,
  command,
  counts,
  entry,
  eventually,
  freshPrefix,
  pause,
  placeA,
  placeB,
  settle,
} from './support';

/**
 * The bound of these caches' calls: 20 times the default, so that a loaded machine's Redis, when
 * it is up, answers within it; a frozen one never does whatever the bound.
 */
const BOUND_MS = 1000;
/** The messages of a call ended by its bound (ours, or ioredis's commandTimeout, the same bound). */
const endedByBound = (boundMs: number) =>
  new RegExp(`did not answer within ${boundMs} ms|Command timed out`);

let redis: LocalRedis;
const caches = new Caches();
const make = (url: string, options: Partial<RedisCacheOptions> = {}) =>
  caches.make(url, { commandTimeoutMs: BOUND_MS, ...options });

beforeAll(async () => {
  redis = await startLocalRedis();
}, 30_000);
afterEach(async () => {
  await redis.thaw();
  await caches.closeAll();
});
afterAll(() => redis?.stop());

/** An invalidation's own bound (the default). */
const INVALIDATION_BOUND_MS = 1000;

/** Every call of both ports, each started fresh, with its bound. */
function everyCall(cache: RedisCache): [string, () => Promise<unknown>, number][] {
  return [
    ['get', () => cache.store.get('k'), BOUND_MS],
    ['mark', () => cache.store.mark(placeA), BOUND_MS],
    ['set', () => cache.store.set(entry('k'), 60_000), BOUND_MS],
    ['set with a mark', () => cache.store.set(entry('k'), 60_000, 'epoch:0:0'), BOUND_MS],
    [
      'invalidate',
      () => cache.store.invalidate({ scope: placeB.scope }, null),
      INVALIDATION_BOUND_MS,
    ],
    ['clear', () => cache.store.clear(), BOUND_MS],
    ['size', () => cache.store.size(), BOUND_MS],
    ['recent', () => cache.store.recent(10), BOUND_MS],
    ['usage', () => cache.store.usage!(), BOUND_MS],
    ['totals', () => cache.counters.totals(), BOUND_MS],
  ];
}

/**
 * Every call fails with RedisCacheUnavailableError; on a frozen Redis, which accepts and never
 * answers, by its bound (a killed one refuses at once). A call that waited for anything else would
 * outlast the test.
 */
async function expectEveryCallToFail(
  cache: RedisCache,
  redisIs: 'killed' | 'frozen',
): Promise<void> {
  for (const [name, call, bound] of everyCall(cache)) {
    const outcome = await settle(call());
    expect({ name, ok: outcome.ok }).toEqual({ name, ok: false });
    expect(outcome.error).toBeInstanceOf(RedisCacheUnavailableError);
    if (redisIs === 'frozen') {
      expect({ name, error: (outcome.error as Error).message }).toEqual({
        name,
        error: expect.stringMatching(endedByBound(bound)),
      });
    }
  }
}

/** The result cache of core over this Redis cache, as the service builds it. */
function resultCacheOver(cache: RedisCache): ResultCache {
  return new ResultCache({
    store: cache.store,
    defaultTtlMs: 60_000,
    maxEntryBytes: 1024 * 1024,
    enabledByDefault: true,
  });
}

/** placeA as a request's cache scope. */
const scopeA: CacheScope = { server: placeA.server, database: placeA.scope, credentials: 'tester' };

async function untilAnswering(cache: RedisCache): Promise<void> {
  await eventually(async () => {
    await cache.store.size();
  }, 10_000);
}

describe('Redis killed', () => {
  afterEach(async () => {
    await redis.restart();
  });

  it('makes every call reject within the bound, and the cache recovers by itself on restart', async () => {
    const cache = make(redis.url);
    await untilAnswering(cache);
    await redis.kill();

    await expectEveryCallToFail(cache, 'killed');
    expect(() => cache.counters.add(counts(1, 1))).not.toThrow();

    await redis.restart();
    await untilAnswering(cache);
    expect(await cache.store.set(entry('k'), 60_000)).toBe(true);
    expect((await cache.store.get('k'))?.hits).toBe(1);
  });

  it('fails an invalidation in time; the result cache keeps it pending and retries it once Redis is back', async () => {
    const prefix = freshPrefix('retry');
    const cache = make(redis.url, { prefix });
    const results = resultCacheOver(cache);
    await untilAnswering(cache);
    await redis.kill();

    const outcome = await settle(results.invalidate(scopeA, 'database'));
    expect(outcome.ok).toBe(false);
    expect(results.unconfirmedInvalidations).toBe(1);

    await redis.restart();
    await eventually(async () => {
      expect(await command(redis.port, 'GET', `${prefix}g:d:${placeHash(placeA.scope)}`)).toBe('1');
    });
    await eventually(() => expect(results.unconfirmedInvalidations).toBe(0));
    await results.close();
  });

  it('refuses marks taken before Redis restarted empty: a new epoch', async () => {
    const cache = make(redis.url);
    await untilAnswering(cache);
    const before = await cache.store.mark(placeA);

    await redis.kill();
    await redis.restart();
    await untilAnswering(cache);

    // The generations are back at 0, as when the mark was taken; only the epoch differs.
    expect(before).toMatch(/^[0-9a-f]+:0:0$/);
    expect(await cache.store.set(entry('k'), 60_000, before)).toBe(false);
    const after = await cache.store.mark(placeA);
    expect(after).not.toBe(before);
    expect(await cache.store.set(entry('k'), 60_000, after)).toBe(true);
  });

  it('counts what was added while Redis was down exactly once when it returns', async () => {
    const prefix = freshPrefix('counts');
    const cache = make(redis.url, { prefix });
    await untilAnswering(cache);
    await redis.kill();

    for (let index = 0; index < 10; index++) {
      cache.counters.add(counts(1, 2, 0.5));
      await pause(30); // flushes keep failing meanwhile
    }
    const outcome = await settle(cache.counters.totals());
    expect(outcome.ok).toBe(false);

    await redis.restart();
    const expected = { hits: 10, misses: 20, executed: 20, executionMs: 5 };
    await eventually(async () => expect(await cache.counters.totals()).toEqual(expected), 10_000);
    await pause(300); // several more flushes
    const other = make(redis.url, { prefix });
    await untilAnswering(other);
    expect(await other.counters.totals()).toEqual(expected);
  });
});

describe('Redis frozen (SIGSTOP)', () => {
  it('lets an invalidation wait out a stall shorter than its bound: another instance asking after it is answered never gets the entry', async () => {
    const prefix = freshPrefix('stall');
    // A bound far past the stall however slowly the test's pauses run.
    const writer = make(redis.url, { prefix, invalidationTimeoutMs: 60_000 });
    const reader = make(redis.url, { prefix });
    await untilAnswering(writer);
    await untilAnswering(reader);
    await reader.store.set(entry('k'), 60_000);
    await redis.freeze();

    const invalidated = settle(writer.store.invalidate({ scope: placeA.scope }, null));
    await pause(200);
    // Asked during the stall, before the write is answered: either answer is right for it, within
    // its own bound.
    const during = settle(reader.store.get('k'));
    await pause(5);
    await redis.thaw();

    const outcome = await invalidated;
    expect(outcome.ok).toBe(true);
    const duringOutcome = await during;
    if (!duringOutcome.ok) {
      expect((duringOutcome.error as Error).message).toMatch(endedByBound(BOUND_MS));
    }
    expect(await reader.store.get('k')).toBeUndefined();
  });

  it('gives an invalidation up at its own bound when the stall outlasts it', async () => {
    const writer = make(redis.url, { invalidationTimeoutMs: 300 });
    await untilAnswering(writer);
    await redis.freeze();

    const outcome = await settle(writer.store.invalidate({ scope: placeA.scope }, null));

    expect(outcome.ok).toBe(false);
    // Not before its bound, and by it: a slower machine only makes it later.
    expect(outcome.ms).toBeGreaterThanOrEqual(290);
    expect((outcome.error as Error).message).toMatch(endedByBound(300));
  });

  // Each call waits out its bound: about ten seconds in all.
  it('makes every call reject within the bound, and the cache answers again after thaw', async () => {
    const prefix = freshPrefix('frozen');
    const cache = make(redis.url, { prefix });
    await untilAnswering(cache);
    await redis.freeze();

    await expectEveryCallToFail(cache, 'frozen');
    // A cache created meanwhile connects (the kernel accepts) but gets no answer either.
    const late = make(redis.url, { prefix });
    const outcome = await settle(late.store.get('k'));
    expect(outcome.ok).toBe(false);
    expect((outcome.error as Error).message).toMatch(endedByBound(BOUND_MS));

    await redis.thaw();
    await untilAnswering(cache);
    await untilAnswering(late);
    expect(await cache.store.set(entry('k'), 60_000)).toBe(true);
    expect(await late.store.get('k')).toBeDefined();
  }, 60_000);

  it('does not count twice a batch whose reply timed out but that Redis applied after thaw', async () => {
    const prefix = freshPrefix('frozen-counts');
    // The default bound: flushes time out during the pause (only later on a loaded machine).
    const cache = make(redis.url, { prefix, commandTimeoutMs: 50 });
    await untilAnswering(cache);
    cache.counters.add(counts(3, 4, 1.25));
    await redis.freeze();
    // Flushes are sent into the frozen server and time out here; Redis still has them.
    await pause(400);
    cache.counters.add(counts(1, 0));

    await redis.thaw();
    const expected = { hits: 4, misses: 4, executed: 4, executionMs: 1.25 };
    await eventually(async () => expect(await cache.counters.totals()).toEqual(expected));
    await pause(300);
    expect(await cache.counters.totals()).toEqual(expected);
  });
});

describe('an invalidation Redis refuses (an ACL that lets the generations be read, not written)', () => {
  it('leaves this instance serving and keeping nothing of that database until a retry succeeds', async () => {
    const prefix = freshPrefix('acl');
    const user = `app${Date.now()}`;
    const writable = ['e:*', 'i:*', 'epoch', 'stats*', 'g:s:*'].map((name) => `~${prefix}${name}`);
    await command(
      redis.port,
      'ACL',
      'SETUSER',
      user,
      'on',
      '>secret',
      '%R~*',
      ...writable,
      '+@all',
    );
    const limited = make(`redis://${user}:secret@127.0.0.1:${redis.port}`, { prefix });
    const other = make(redis.url, { prefix });
    await untilAnswering(limited);
    await limited.store.set(entry('a1', placeA), 60_000);
    await limited.store.set(entry('b1', placeB), 60_000);

    const results = resultCacheOver(limited);

    await expect(results.invalidate(scopeA, 'database')).rejects.toThrow(
      RedisCacheUnavailableError,
    );

    // This instance serves nothing of the database whose write it could not announce.
    expect(await limited.store.get('a1')).toBeDefined();
    expect(await results.lookup('a1')).toBeUndefined();
    expect(await results.lookup('b1')).toBeDefined();
    // The window docs/decisions.md 10.27 documents: another instance cannot know of it yet.
    expect(await other.store.get('a1')).toBeDefined();

    await command(redis.port, 'ACL', 'SETUSER', user, `~${prefix}g:d:*`);

    await eventually(async () => expect(await other.store.get('a1')).toBeUndefined());
    await eventually(() => expect(results.unconfirmedInvalidations).toBe(0));
    expect(await limited.store.set(entry('a2', placeA), 60_000)).toBe(true);
    expect(await results.lookup('a2')).toBeDefined();
    expect(await results.lookup('b1')).toBeDefined();
    await results.close();
  });
});

describe("a Redis slower to set a connection up than a request's bound", () => {
  /** A proxy to Redis that opens its way to Redis only `delayMs` after a client connects. */
  async function slowToConnect(delayMs: number): Promise<{ url: string; close: () => void }> {
    const server = createServer((client) => {
      client.pause();
      setTimeout(() => {
        const upstream = connect(redis.port, '127.0.0.1', () => {
          client.pipe(upstream).pipe(client);
          client.resume();
        });
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      }, delayMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { url: `redis://127.0.0.1:${port}`, close: () => server.close() };
  }

  it('is used once connected: setting up is not held to the bound', async () => {
    const proxy = await slowToConnect(300);
    try {
      const cache = caches.make(proxy.url, { commandTimeoutMs: 50 });
      // Calls made while it connects fail at their bound; the connection is not given up for it.
      await eventually(async () => {
        expect(await cache.store.set(entry('k'), 60_000)).toBe(true);
      });
      expect(await cache.store.get('k')).toMatchObject({ key: 'k' });
    } finally {
      proxy.close();
    }
  });

  it('is healthy: a health check waits for the connection (docs/decisions.md 10.40)', async () => {
    const proxy = await slowToConnect(300);
    try {
      // The requests' default bound: 50 ms, less than connecting takes here.
      const cache = caches.make(proxy.url, { commandTimeoutMs: 50 });
      const { store } = cache;
      if (store.ping === undefined) throw new Error('the Redis store has no ping');
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      proxy.close();
    }
  });
});
