/**
 * The result cache under failures and races (docs/decisions.md 10.27): a store that cannot
 * invalidate, reads that never land, waiting requests cancelled, refreshes that hang, results cut
 * by another statement's byte budget, and hit counts of entries not served.
 */
import { MemoryCacheStore, UNCONFIRMED_INVALIDATION_WARNING } from '../../src/cache';
import type { InvalidationScope } from '../../src/ports/cache-store';
import { databaseError, fakeTarget } from '../fakes/fake-connections';
import { harness, sleep } from './service-harness';
import { shiftedClock, resultsOf } from './cache-support';

const READ = 'SELECT * FROM items';
const OTHER = 'SELECT * FROM other';
const WRITE = 'UPDATE items SET name = name';

/** Resolves to `promise`'s value, or to 'still waiting' after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([promise, sleep(ms).then(() => 'still waiting' as const)]);
}

describe('coherence', () => {
  // A write is answered even when the store fails to invalidate: this instance must then stop
  // serving the place, and refuse results of reads that began before the write.
  it('never serves pre-write rows after a write was answered, even when invalidate failed', async () => {
    class FlakyInvalidate extends MemoryCacheStore {
      failNext = false;
      override async invalidate(where: InvalidationScope, relations: string[] | null) {
        if (this.failNext) {
          this.failNext = false;
          throw new Error('store timed out');
        }
        return super.invalidate(where, relations);
      }
    }
    const store = new FlakyInvalidate();
    const { fake, query } = harness({ cacheStore: store });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }] }));
    fake.on(WRITE, { command: 'UPDATE', rowCount: 1 });

    await query(READ, { cache: true });
    store.failNext = true;
    const write = await query(WRITE);
    expect(write.failure).toBeUndefined(); // the write's answer was sent, as a success
    const after = await query(READ, { cache: true });

    expect(after.body).toMatchObject({ rows: [{ version: 2 }] });
  });

  it('answers a write whose invalidation failed with a warning, and tells the service warn hook', async () => {
    class FailingInvalidate extends MemoryCacheStore {
      override async invalidate(): Promise<number> {
        throw new Error('store timed out');
      }
    }
    const warned: Record<string, unknown>[] = [];
    const { fake, query } = harness({
      cacheStore: new FailingInvalidate(),
      warn: (message, details) => warned.push({ message, ...details }),
    });
    fake.on(WRITE, { command: 'UPDATE', rowCount: 1 });
    fake.on(READ, { rows: [{ id: 1 }] });

    const write = await query(WRITE, {}, { requestId: 'r-1' });
    const read = await query(READ, { cache: true });

    expect(write.body).toMatchObject({ rowCount: 1, warnings: [UNCONFIRMED_INVALIDATION_WARNING] });
    expect(warned).toEqual([
      {
        message: 'cache invalidation not confirmed by the store',
        reqId: 'r-1',
        place: expect.any(String),
      },
    ]);
    expect(read.body).not.toHaveProperty('warnings');
  });

  it('does not let a read that began before a write join or keep its rows when invalidate failed', async () => {
    class FlakyInvalidate extends MemoryCacheStore {
      override async invalidate(): Promise<number> {
        throw new Error('store timed out');
      }
    }
    const { fake, query } = harness({ cacheStore: new FlakyInvalidate() });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }], delayMs: 80 }));
    fake.on(WRITE, { command: 'UPDATE', rowCount: 1 });

    const early = query(READ, { cache: true });
    await sleep(10);
    await query(WRITE); // answered while the early read still runs
    const late = await query(READ, { cache: true }); // joins the early read (same mark)
    await early; // ...whose pre-write rows are then kept: set() saw no invalidation
    const later = await query(READ, { cache: true });

    expect(late.body).toMatchObject({ rows: [{ version: 2 }] });
    expect(later.body).not.toMatchObject({ rows: [{ version: 1 }] });
  });
});

describe('single-flight: flights that never land, leaders displaced', () => {
  // A rejecting acquire (a provider defect, docs/decisions.md 10.21) must still land the flight,
  // or every identical request at the same mark would join it and wait until a write.
  it('lands the flight of a parallel read whose acquire rejected', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }] });
    fake.on(OTHER, { rows: [{ id: 2 }] });
    fake.onAcquire({ error: new Error('pool defect') }); // not a PortFailure: the call rejects

    const failed = await query(`${READ}; ${OTHER}`, { cache: true }, {});
    expect(failed.failure).toBeDefined();

    const later = await within(query(READ, { cache: true }), 1000);
    expect(later).not.toBe('still waiting');
  });

  // A waiting request that is cancelled must not displace the read still running: the next
  // identical request joins that read instead of sending the statement again.
  it('keeps the running read joinable after a waiting request is cancelled', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }], delayMs: 200 });
    const gone = new AbortController();

    const leader = query(READ, { cache: true });
    await sleep(20);
    const cancelled = query(READ, { cache: true }, { signal: gone.signal });
    await sleep(20);
    gone.abort();
    await cancelled;
    const late = await query(READ, { cache: true });
    await leader;

    expect(fake.sent().filter((sql) => sql === READ)).toHaveLength(1);
    expect(late.body).toMatchObject({ rows: [{ id: 1 }], cacheStatus: 'hit' });
  });

  it('keeps the running read joinable after a waiting request is cancelled by its id', async () => {
    const { fake, query, service } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on(READ, { rows: [{ id: 1 }], delayMs: 200 });

    const leader = query(READ, { cache: true });
    await sleep(20);
    const cancelled = query(READ, { cache: true }, { requestId: 'r-1' });
    await sleep(20);
    service.cancelRequest('r-1', fakeTarget);
    await cancelled;
    const late = await query(READ, { cache: true });
    await leader;

    expect(fake.sent().filter((sql) => sql === READ)).toHaveLength(1);
    expect(late.body).toMatchObject({ cacheStatus: 'hit' });
  });
});

describe('background refresh', () => {
  // A refresh that never gets an answer must not stop the refresh of the entry cached after it.
  it('does not let one hung refresh stop every later refresh of its key', async () => {
    const time = shiftedClock();
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore(), clock: time });
    let version = 0;
    fake.on(READ, () => ({ rows: [{ version: ++version }] }));
    fake.on(WRITE, { command: 'UPDATE', rowCount: 1 });
    const cache = { ttlMs: 1000, swrMs: 60_000 };

    await query(READ, { cache }); // version 1
    time.shiftMs = 5000; // every entry looks 5 s old: stale, within swrMs
    fake.once(READ, { hang: true });
    await query(READ, { cache }); // stale; its refresh never gets an answer
    await sleep(20);
    expect(fake.lentCount()).toBe(1); // ...and keeps a pooled connection, with nothing to end it

    await query(WRITE); // removes the entry
    const reread = await query(READ, { cache }); // a miss: version 2, kept
    expect(reread.body).toMatchObject({ rows: [{ version: 2 }], cacheStatus: 'miss' });
    time.shiftMs += 5000; // the new entry ages past its ttlMs too
    const stale = await query(READ, { cache }); // stale again: a refresh should start
    expect(stale.body).toMatchObject({ cacheStatus: 'stale' });
    await sleep(50);

    // initial read, hung refresh, re-read, and the refresh of the new entry
    const runs = fake.callsOf('run').filter((call) => call.sql === READ);
    expect(runs).toHaveLength(4);
  });
});

describe('results shared or kept that another request would not get', () => {
  // A parallel read cut by the request's byte budget (other reads of the request used it) is
  // neither kept nor shared: another request's own budget would hold every row.
  it('does not serve a result truncated by another request’s shared byte budget', async () => {
    const { fake, query } = harness({
      cacheStore: new MemoryCacheStore(),
      maxResultBytes: 200,
      maxParallelReads: 1,
    });
    fake.on(OTHER, { rows: [{ filler: 'x'.repeat(150) }] });
    fake.on(READ, { rows: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }] });

    const both = await query(`${OTHER}; ${READ}`, { cache: true });
    const [, readInBoth] = resultsOf(both.body);
    expect(readInBoth).toMatchObject({ truncated: true, truncatedBy: 'bytes' });

    const alone = await query(READ, { cache: true });

    expect((alone.body as { rows: unknown[] }).rows).toHaveLength(5);
  });

  it('does not hand a budget-truncated parallel read to an identical single request waiting on it', async () => {
    const { fake, query } = harness({
      cacheStore: new MemoryCacheStore(),
      maxResultBytes: 200,
      maxParallelReads: 1,
    });
    fake.on(OTHER, { rows: [{ filler: 'x'.repeat(150) }] });
    fake.on(READ, { rows: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }], delayMs: 60 });

    const both = query(`${OTHER}; ${READ}`, { cache: true });
    await sleep(20);
    const alone = await query(READ, { cache: true });
    await both;

    expect((alone.body as { rows: unknown[] }).rows).toHaveLength(5);
  });
});

describe('counts', () => {
  // An entry too stale for the request that looked it up was not served: no hit is counted.
  it('does not count a hit on an entry that was not served', async () => {
    const time = shiftedClock();
    const { fake, query, service } = harness({ cacheStore: new MemoryCacheStore(), clock: time });
    fake.on(READ, { rows: [{ id: 1 }] });

    await query(READ, { cache: { ttlMs: 1000, swrMs: 60_000 } });
    time.shiftMs = 5000;
    fake.once(READ, { error: databaseError('57P01', 'terminating connection') });
    const refused = await query(READ, { cache: { ttlMs: 1000 } }); // no swrMs: not served
    expect(refused.failure).toBeDefined();

    const { entries } = await service.cacheStatistics();
    expect(entries[0]?.hits).toBe(0);
  });
});

describe('requests that never reached the database', () => {
  it('invalidate nothing: a write refused at login leaves the cache as it was', async () => {
    const store = new MemoryCacheStore();
    const invalidations: unknown[] = [];
    const original = store.invalidate.bind(store);
    store.invalidate = async (where, relations) => {
      invalidations.push(where);
      return original(where, relations);
    };
    const { fake, query } = harness({ cacheStore: store });
    fake.on(READ, { rows: [{ id: 1 }] });
    await query(READ, { cache: true });
    fake.onAcquire({
      error: databaseError('28P01', 'password authentication failed for user "app"'),
    });

    const refused = await query(WRITE);
    const again = await query(READ, { cache: true });

    expect(refused.failure).toBeDefined();
    expect(invalidations).toEqual([]);
    expect(again.body).toMatchObject({ cacheStatus: 'hit' });
  });
});
