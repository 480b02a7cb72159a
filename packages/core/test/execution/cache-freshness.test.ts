/**
 * What the result cache does for each request (docs/decisions.md 10.27): cacheStatus on every
 * result, stale-while-revalidate within swrMs with one refresh at a time, and identical misses
 * sharing one read (single-flight) unless a write came between them.
 */
import { MemoryCacheStore } from '../../src/cache';
import { databaseError } from '../fakes/fake-connections';
import { harness, sleep } from './service-harness';
import { failingStore, resultsOf, shiftedClock } from './cache-support';

const READ = 'SELECT * FROM items';
const WRITE = 'UPDATE items SET name = name';

describe('cacheStatus on every result', () => {
  it('says miss, then hit, for a cached read', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }] });

    const miss = await query(READ, { cache: true });
    const hit = await query(READ, { cache: true });

    expect(miss.body).toMatchObject({ cacheStatus: 'miss' });
    expect(miss.body).not.toHaveProperty('cacheReason');
    expect(hit.body).toMatchObject({ cacheStatus: 'hit', cached: true });
  });

  it('says bypass and why, statement by statement', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }] });
    fake.on('SELECT random()', { rows: [{ random: 0.5 }] });
    fake.on(WRITE, { command: 'UPDATE', rowCount: 1 });

    const notAsked = await query(READ);
    const volatile = await query('SELECT random()', { cache: true });
    const mixed = await query(`${READ}; ${WRITE}`, { cache: true });

    expect(notAsked.body).toMatchObject({ cacheStatus: 'bypass', cacheReason: 'disabled' });
    expect(volatile.body).toMatchObject({ cacheStatus: 'bypass', cacheReason: 'volatile' });
    expect(resultsOf(mixed.body).map((each) => [each.cacheStatus, each.cacheReason])).toEqual([
      ['bypass', 'transaction'],
      ['bypass', 'write'],
    ]);
  });

  it('says bypass/unavailable when the store fails, and the read still answers', async () => {
    const failing = failingStore();
    const { fake, query } = harness({ cacheStore: failing });
    fake.on(READ, { rows: [{ id: 1 }] });

    const response = await query(READ, { cache: true });

    expect(response.body).toMatchObject({
      rows: [{ id: 1 }],
      cacheStatus: 'bypass',
      cacheReason: 'unavailable',
    });
  });
});

describe('stale-while-revalidate', () => {
  it('serves a stale entry within swrMs while exactly one refresh runs, then the fresh one', async () => {
    const time = shiftedClock();
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore(), clock: time });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }], delayMs: 30 }));
    const cache = { ttlMs: 1000, swrMs: 60_000 };

    await query(READ, { cache });
    time.shiftMs = 5000; // past ttlMs, within swrMs
    const stale = await Promise.all([1, 2, 3].map(() => query(READ, { cache })));

    for (const each of stale) {
      expect(each.body).toMatchObject({
        rows: [{ version: 1 }],
        cacheStatus: 'stale',
        cached: true,
      });
    }
    // The refresh reads in the background; until it has stored its rows, the entry of version 1
    // is fresh again at the unshifted clock, so waiting for version 2 starts no other read.
    time.shiftMs = 0;
    let refreshed = await query(READ, { cache });
    const versionOf = (answer: typeof refreshed) =>
      (answer.body as { rows?: { version: number }[] }).rows?.[0]?.version;
    for (let tries = 0; versionOf(refreshed) !== 2 && tries < 1000; tries += 1) {
      await sleep(10);
      refreshed = await query(READ, { cache });
    }

    expect(refreshed.body).toMatchObject({ rows: [{ version: 2 }], cacheStatus: 'hit' });
    // The first read, and one refresh for three stale answers.
    expect(fake.sent().filter((sql) => sql === READ)).toHaveLength(2);
  });

  it('does not serve an entry older than ttlMs + swrMs: the request reads', async () => {
    const time = shiftedClock();
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore(), clock: time });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }] }));

    await query(READ, { cache: { ttlMs: 1000, swrMs: 60_000 } });
    time.shiftMs = 5000;
    // This request accepts 2 s of staleness only.
    const response = await query(READ, { cache: { ttlMs: 1000, swrMs: 1000 } });

    expect(response.body).toMatchObject({ rows: [{ version: 2 }], cacheStatus: 'miss' });
  });

  it('never serves a stale entry to a request without swrMs', async () => {
    const time = shiftedClock();
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore(), clock: time });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }] }));

    await query(READ, { cache: { ttlMs: 1000, swrMs: 60_000 } });
    time.shiftMs = 1500;
    const response = await query(READ, { cache: { ttlMs: 1000 } });

    expect(response.body).toMatchObject({ rows: [{ version: 2 }], cacheStatus: 'miss' });
  });

  it('keeps the stale entry when the refresh fails, and refreshes again on a later request', async () => {
    const time = shiftedClock();
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore(), clock: time });
    fake.on(READ, { rows: [{ version: 1 }] });
    const cache = { ttlMs: 1000, swrMs: 60_000 };

    await query(READ, { cache });
    time.shiftMs = 5000;
    fake.once(READ, { error: databaseError('57P01', 'terminating connection') });
    await query(READ, { cache });
    await sleep(20);
    const again = await query(READ, { cache });
    await sleep(20);

    expect(again.body).toMatchObject({ rows: [{ version: 1 }], cacheStatus: 'stale' });
    expect(fake.sent().filter((sql) => sql === READ)).toHaveLength(3);
  });
});

describe('single-flight', () => {
  it('sends identical concurrent misses once and serves the others the same rows as hits', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }], delayMs: 50 });

    const answers = await Promise.all([1, 2, 3, 4].map(() => query(READ, { cache: true })));

    expect(fake.sent().filter((sql) => sql === READ)).toHaveLength(1);
    expect(
      answers.map((each) => (each.body as { cacheStatus: string }).cacheStatus).sort(),
    ).toEqual(['hit', 'hit', 'hit', 'miss']);
    for (const each of answers) expect(each.body).toMatchObject({ rows: [{ id: 1 }] });
  });

  it('does not join a read that began before a write: the later request reads for itself', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }], delayMs: 80 }));
    fake.on(WRITE, { command: 'UPDATE', rowCount: 1 });

    const early = query(READ, { cache: true });
    await sleep(10);
    await query(WRITE);
    const late = await query(READ, { cache: true });

    expect((await early).body).toMatchObject({ rows: [{ version: 1 }] });
    expect(late.body).toMatchObject({ rows: [{ version: 2 }], cacheStatus: 'miss' });
  });

  it('runs the waiting requests themselves when the read they waited for fails', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }] });
    fake.once(READ, { error: databaseError('40001', 'could not serialize'), delayMs: 40 });

    const [first, second] = await Promise.all([
      query(READ, { cache: true }),
      sleep(5).then(() => query(READ, { cache: true })),
    ]);

    expect(first?.failure).toMatchObject({ sqlState: '40001' });
    expect(second?.body).toMatchObject({ rows: [{ id: 1 }], cacheStatus: 'miss' });
  });

  it("shares no read whose parameter handed date/time input 'now': each request reads for itself", async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    const CLOCK_READ = 'SELECT $1::timestamptz AS at';
    let reads = 0;
    fake.on(CLOCK_READ, () => ({ rows: [{ at: `read ${++reads}` }], delayMs: 40 }));

    const answers = await Promise.all(
      [0, 5, 10].map((ms) =>
        sleep(ms).then(() => query(CLOCK_READ, { cache: true, params: ['now'] })),
      ),
    );

    expect(fake.sent().filter((sql) => sql === CLOCK_READ)).toHaveLength(3);
    for (const answer of answers) {
      expect(answer.body).toMatchObject({ cacheStatus: 'bypass', cacheReason: 'volatile' });
    }
    const again = await query(CLOCK_READ, { cache: true, params: ['now'] });
    expect(again.body).toMatchObject({ rows: [{ at: 'read 4' }], cacheStatus: 'bypass' });
  });

  it('does not share between requests with different time limits', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }], delayMs: 40 });

    await Promise.all([
      query(READ, { cache: true, timeoutMs: 5000 }),
      query(READ, { cache: true, timeoutMs: 10 }),
    ]);

    expect(fake.sent().filter((sql) => sql === READ)).toHaveLength(2);
  });

  it('lets a waiting request be cancelled without waiting for the read it joined', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }], delayMs: 300 });
    const gone = new AbortController();

    const leader = query(READ, { cache: true });
    await sleep(10);
    const follower = query(READ, { cache: true }, { signal: gone.signal });
    await sleep(10);
    gone.abort();
    const answeredFirst = await Promise.race([
      follower.then(() => 'follower'),
      leader.then(() => 'leader'),
    ]);

    expect(answeredFirst).toBe('follower');
    expect((await follower).body).not.toHaveProperty('rows');
    expect((await leader).body).toMatchObject({ rows: [{ id: 1 }] });
  });
});
