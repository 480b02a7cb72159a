/**
 * The Redis limit store on a real Redis: instances sharing one Redis share each key's bucket and
 * slots. Counts are asserted only where refill during the test cannot change them (rates of a few
 * per hour), never times.
 */
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import type { LimitDecision, LimitStore, RateRule } from '@sqlgate/core';
import { createRedisLimitStore, type RedisLimitStoreOptions } from '../src';
import { concurrencyKey } from '../src/key-layout';
import { command, eventually, freshPrefix, keysUnder, pause } from './support';

const tenPerHour: RateRule = { tokens: 10, perMs: 3_600_000, burst: 10 };

/** Stores and their clients, closed after each test. */
class Stores {
  private readonly clients: Redis[] = [];
  private readonly stores: (LimitStore & { close(): Promise<void> })[] = [];

  make(url: string, options: Partial<RedisLimitStoreOptions> & { prefix: string }) {
    // ioredis waits up to disconnectTimeout for a socket still connecting to close, by a timer
    // that would outlive the test.
    const redis = new Redis(url, { disconnectTimeout: 100 });
    redis.on('error', () => undefined);
    this.clients.push(redis);
    const store = createRedisLimitStore({ redis, timeoutMs: 1000, ...options });
    this.stores.push(store);
    return store;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.stores.splice(0).map((store) => store.close()));
    for (const client of this.clients.splice(0)) client.disconnect();
  }
}

const oks = (decisions: LimitDecision[]) => decisions.filter((decision) => decision.ok).length;

describe('the Redis limit store', () => {
  let redis: LocalRedis;
  const stores = new Stores();

  beforeAll(async () => {
    redis = await startLocalRedis();
  }, 30_000);
  afterEach(() => stores.closeAll());
  afterAll(() => redis?.stop());

  test('two instances share one bucket: 100 takes alternating between them, 10 pass', async () => {
    const prefix = freshPrefix('limits');
    const degraded: string[] = [];
    const first = stores.make(redis.url, { prefix, onDegraded: (reason) => degraded.push(reason) });
    // Clocks an hour apart: buckets run on Redis's clock, so the instances still agree.
    const second = stores.make(redis.url, {
      prefix,
      clock: { now: () => performance.now() + 3_600_000 },
    });
    const decisions: LimitDecision[] = [];
    for (let index = 0; index < 100; index++) {
      decisions.push(await (index % 2 === 0 ? first : second).take('api-key', tenPerHour));
    }
    expect(oks(decisions)).toBe(10);
    expect(decisions.slice(0, 10).every((decision) => decision.ok)).toBe(true);
    for (const refusal of decisions.slice(10)) {
      // One token of 10 per hour comes back within 6 minutes.
      expect(refusal).toEqual({ ok: false, retryAfterMs: expect.any(Number) });
      const { retryAfterMs } = refusal as { retryAfterMs: number };
      expect(retryAfterMs).toBeGreaterThan(300_000);
      expect(retryAfterMs).toBeLessThanOrEqual(360_000);
    }
    expect(degraded).toEqual([]);
    // Another key has a bucket of its own.
    expect(await first.take('another-key', tenPerHour)).toEqual({ ok: true });
  });

  test('a bucket with a burst above its rate gives the burst, then refuses for the time to one token', async () => {
    const store = stores.make(redis.url, { prefix: freshPrefix('limits') });
    const rule: RateRule = { tokens: 1, perMs: 60_000, burst: 3 };
    const decisions: LimitDecision[] = [];
    for (let index = 0; index < 5; index++) decisions.push(await store.take('key', rule));
    expect(oks(decisions)).toBe(3);
    const { retryAfterMs } = decisions[4] as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(30_000);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  test('tokens come back, and a bucket full again leaves no key in Redis', async () => {
    const prefix = freshPrefix('limits');
    const store = stores.make(redis.url, { prefix });
    const rule: RateRule = { tokens: 1, perMs: 300, burst: 1 };
    expect(await store.take('key', rule)).toEqual({ ok: true });
    expect(await keysUnder(redis.port, prefix)).toHaveLength(1);
    await eventually(async () => expect(await keysUnder(redis.port, prefix)).toEqual([]));
    expect(await store.take('key', rule)).toEqual({ ok: true });
  });

  test('slots are shared: at most `cap` held at once over two instances', async () => {
    const prefix = freshPrefix('limits');
    const first = stores.make(redis.url, { prefix });
    const second = stores.make(redis.url, { prefix });
    const held = [await first.enter('key', 2), await second.enter('key', 2)];
    expect(held.map((answer) => answer.ok)).toEqual([true, true]);
    expect(await first.enter('key', 2)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect(await second.enter('key', 2)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect((await second.enter('other-key', 2)).ok).toBe(true);
    const slot = held[0]!.ok ? held[0]!.slot : undefined;
    slot?.release();
    slot?.release();
    await eventually(async () =>
      expect(await command(redis.port, 'ZCARD', concurrencyKey(prefix, 'key'))).toBe(1),
    );
    expect((await second.enter('key', 2)).ok).toBe(true);
    // The second release gave back nobody else's slot.
    expect((await first.enter('key', 2)).ok).toBe(false);
  });

  test('a held slot is renewed past its lease; one no longer renewed expires', async () => {
    const prefix = freshPrefix('limits');
    const holder = stores.make(redis.url, { prefix, leaseMs: 1500 });
    const other = stores.make(redis.url, { prefix, leaseMs: 1500 });
    expect((await holder.enter('key', 1)).ok).toBe(true);
    await pause(4500);
    expect((await other.enter('key', 1)).ok).toBe(false);
    // As an instance that crashed: its lease is no longer renewed.
    await holder.close();
    await eventually(async () => expect((await other.enter('key', 1)).ok).toBe(true), 10_000);
  });
});

describe('the Redis limit store when Redis fails', () => {
  let redis: LocalRedis;
  const stores = new Stores();
  const threePerHour: RateRule = { tokens: 3, perMs: 3_600_000, burst: 3 };

  beforeAll(async () => {
    redis = await startLocalRedis();
  }, 30_000);
  afterEach(async () => {
    await redis.thaw().catch(() => undefined);
    await stores.closeAll();
  });
  afterAll(() => redis?.stop());

  test('Redis gone: calls are decided in memory, still limited, and said to be; Redis back, it is used again', async () => {
    const prefix = freshPrefix('limits');
    const degraded: string[] = [];
    // A clock that does not move: Redis is skipped for the whole test after the failure.
    const store = stores.make(redis.url, {
      prefix,
      clock: { now: () => 0 },
      onDegraded: (reason) => degraded.push(reason),
    });
    expect(await store.take('key', threePerHour)).toEqual({ ok: true });
    await redis.kill();
    const decisions: LimitDecision[] = [];
    for (let index = 0; index < 5; index++) decisions.push(await store.take('key', threePerHour));
    // This instance's own bucket: full at first, then limiting.
    expect(oks(decisions)).toBe(3);
    expect((await store.enter('key', 1)).ok).toBe(true);
    expect((await store.enter('key', 1)).ok).toBe(false);
    expect(degraded).toHaveLength(1);
    expect(degraded[0]).toMatch(/^take decided by this instance alone: /);

    await redis.restart();
    const recovered = stores.make(redis.url, { prefix, retryRedisAfterMs: 0 });
    await eventually(async () => {
      await recovered.take('key', threePerHour);
      expect(await keysUnder(redis.port, prefix)).not.toEqual([]);
    });
  });

  test('Redis frozen: each call is decided in memory once timeoutMs has passed', async () => {
    const prefix = freshPrefix('limits');
    const degraded: string[] = [];
    const store = stores.make(redis.url, {
      prefix,
      timeoutMs: 200,
      retryRedisAfterMs: 0,
      onDegraded: (reason) => degraded.push(reason),
    });
    expect(await store.take('warm-up', threePerHour)).toEqual({ ok: true });
    await redis.freeze();
    expect(await store.take('key', threePerHour)).toEqual({ ok: true });
    const entered = await store.enter('key', 1);
    expect(entered.ok).toBe(true);
    expect(degraded).toEqual([
      'take decided by this instance alone: Redis did not answer within 200 ms',
      'enter decided by this instance alone: Redis did not answer within 200 ms',
    ]);
    // Redis answers what it was sent once thawed: the lease it granted after the bound is given
    // back, since the call was decided in memory.
    await redis.thaw();
    await eventually(async () =>
      expect(await command(redis.port, 'EXISTS', concurrencyKey(prefix, 'key'))).toBe(0),
    );
  });
});
