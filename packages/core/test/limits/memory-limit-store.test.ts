import {
  createMemoryLimitStore,
  retryAfterSeconds,
  type LimitStore,
  type RateRule,
} from '../../src';

/** A clock that moves only when told. */
function fakeClock(start = 1_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const tenPerSecond: RateRule = { tokens: 10, perMs: 1000, burst: 10 };

async function takes(store: LimitStore, key: string, rule: RateRule, count: number) {
  const decisions = [];
  for (let index = 0; index < count; index++) decisions.push(await store.take(key, rule));
  return decisions;
}

describe('the memory limit store: token buckets', () => {
  test('100 takes at 10/s, burst 10, at one instant: 10 pass, 90 are refused until the next token', async () => {
    const store = createMemoryLimitStore(fakeClock());
    const decisions = await takes(store, 'key', tenPerSecond, 100);
    expect(decisions.filter((decision) => decision.ok)).toHaveLength(10);
    expect(decisions.slice(0, 10).every((decision) => decision.ok)).toBe(true);
    expect(decisions.slice(10)).toEqual(Array(90).fill({ ok: false, retryAfterMs: 100 }));
  });

  test('a refusal tells the time left until one token is back, and refusals take nothing', async () => {
    const clock = fakeClock();
    const store = createMemoryLimitStore(clock);
    await takes(store, 'key', tenPerSecond, 10);
    clock.advance(30);
    expect(await store.take('key', tenPerSecond)).toEqual({ ok: false, retryAfterMs: 70 });
    clock.advance(69);
    expect(await store.take('key', tenPerSecond)).toEqual({ ok: false, retryAfterMs: 1 });
    clock.advance(1);
    expect(await store.take('key', tenPerSecond)).toEqual({ ok: true });
    expect(await store.take('key', tenPerSecond)).toEqual({ ok: false, retryAfterMs: 100 });
  });

  test('tokens come back continuously with time, up to the burst', async () => {
    const clock = fakeClock();
    const store = createMemoryLimitStore(clock);
    await takes(store, 'key', tenPerSecond, 10);
    clock.advance(350);
    const afterRefill = await takes(store, 'key', tenPerSecond, 10);
    expect(afterRefill.filter((decision) => decision.ok)).toHaveLength(3);
    clock.advance(60_000);
    const afterIdle = await takes(store, 'key', tenPerSecond, 20);
    expect(afterIdle.filter((decision) => decision.ok)).toHaveLength(10);
  });

  test('a burst larger than the rate: the burst at once, then the rate', async () => {
    const clock = fakeClock();
    const store = createMemoryLimitStore(clock);
    const rule: RateRule = { tokens: 1, perMs: 1000, burst: 5 };
    const first = await takes(store, 'key', rule, 8);
    expect(first.filter((decision) => decision.ok)).toHaveLength(5);
    expect(first[5]).toEqual({ ok: false, retryAfterMs: 1000 });
    clock.advance(1000);
    expect(await takes(store, 'key', rule, 2)).toEqual([
      { ok: true },
      { ok: false, retryAfterMs: 1000 },
    ]);
  });

  test('keys have buckets of their own', async () => {
    const store = createMemoryLimitStore(fakeClock());
    await takes(store, 'a', tenPerSecond, 10);
    expect(await store.take('a', tenPerSecond)).toMatchObject({ ok: false });
    expect(await store.take('b', tenPerSecond)).toEqual({ ok: true });
  });

  test('a clock going back refills nothing', async () => {
    const clock = fakeClock();
    const store = createMemoryLimitStore(clock);
    await takes(store, 'key', tenPerSecond, 10);
    clock.advance(-5_000);
    expect(await store.take('key', tenPerSecond)).toEqual({ ok: false, retryAfterMs: 100 });
  });

  test('rules that make no bucket are refused', async () => {
    const store = createMemoryLimitStore(fakeClock());
    for (const rule of [
      { tokens: 0, perMs: 1000, burst: 1 },
      { tokens: 1, perMs: 0, burst: 1 },
      { tokens: 1, perMs: 1000, burst: 0.5 },
      { tokens: Number.NaN, perMs: 1000, burst: 1 },
    ]) {
      await expect(store.take('key', rule)).rejects.toThrow(RangeError);
    }
  });
});

describe('the memory limit store: bounded memory', () => {
  test('a bucket that has refilled is forgotten', async () => {
    const clock = fakeClock();
    const store = createMemoryLimitStore(clock);
    await store.take('idle', tenPerSecond);
    expect(store.keys()).toBe(1);
    clock.advance(100);
    // Taking from other keys looks at the oldest buckets and drops the full ones.
    await store.take('busy', tenPerSecond);
    expect(store.keys()).toBe(1);
    clock.advance(100);
    await store.take('busy', tenPerSecond);
    expect(store.keys()).toBe(1);
  });

  test('past maxKeys, full buckets make room first, then the least recently used', async () => {
    const clock = fakeClock();
    const store = createMemoryLimitStore(clock, { maxKeys: 3 });
    const slow: RateRule = { tokens: 1, perMs: 3_600_000, burst: 1 };
    await store.take('a', slow);
    await store.take('b', slow);
    await store.take('full-soon', tenPerSecond);
    clock.advance(100);
    // 'full-soon' is full again: it goes, and 'a' and 'b' stay empty.
    await store.take('c', slow);
    expect(await store.take('a', slow)).toMatchObject({ ok: false });
    expect(await store.take('b', slow)).toMatchObject({ ok: false });
    // None is full now: the least recently used ('a') goes, and starts full again.
    await store.take('d', slow);
    expect(store.keys()).toBeLessThanOrEqual(3);
    expect(await store.take('b', slow)).toMatchObject({ ok: false });
    expect(await store.take('a', slow)).toEqual({ ok: true });
  });
});

describe('the memory limit store: concurrency', () => {
  test('at most `cap` slots of a key are held at once', async () => {
    const store = createMemoryLimitStore(fakeClock());
    const first = await store.enter('key', 2);
    const second = await store.enter('key', 2);
    expect(first.ok && second.ok).toBe(true);
    expect(await store.enter('key', 2)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect((await store.enter('other', 2)).ok).toBe(true);
    if (first.ok) first.slot.release();
    expect((await store.enter('key', 2)).ok).toBe(true);
  });

  test('release is idempotent: a second release frees nobody else’s slot', async () => {
    const store = createMemoryLimitStore(fakeClock());
    const first = await store.enter('key', 2);
    await store.enter('key', 2);
    if (!first.ok) throw new Error('refused');
    first.slot.release();
    first.slot.release();
    expect((await store.enter('key', 2)).ok).toBe(true);
    expect((await store.enter('key', 2)).ok).toBe(false);
  });

  test('a release after the key’s slots changed does not go below what is held', async () => {
    const store = createMemoryLimitStore(fakeClock());
    const old = await store.enter('key', 1);
    if (!old.ok) throw new Error('refused');
    old.slot.release();
    // The key's slots were emptied and are held again by someone else.
    const current = await store.enter('key', 1);
    expect(current.ok).toBe(true);
    old.slot.release();
    expect(await store.enter('key', 1)).toMatchObject({ ok: false });
    expect(store.keys()).toBe(1);
    if (current.ok) current.slot.release();
    expect(store.keys()).toBe(0);
  });

  test('caps that are not positive integers are refused', async () => {
    const store = createMemoryLimitStore(fakeClock());
    await expect(store.enter('key', 0)).rejects.toThrow(RangeError);
    await expect(store.enter('key', 1.5)).rejects.toThrow(RangeError);
  });
});

test('Retry-After is whole seconds, rounded up, at least 1', () => {
  expect(retryAfterSeconds(1)).toBe(1);
  expect(retryAfterSeconds(0)).toBe(1);
  expect(retryAfterSeconds(1000)).toBe(1);
  expect(retryAfterSeconds(1001)).toBe(2);
  expect(retryAfterSeconds(360_000)).toBe(360);
  expect(retryAfterSeconds(Number.NaN)).toBe(1);
});
