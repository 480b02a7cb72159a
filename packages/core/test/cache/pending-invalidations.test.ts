/** The bookkeeping of invalidations that failed: what stays pending, what clears it, the retries. */
import { PendingInvalidations, RETRY_INTERVAL_MS } from '../../src/cache/pending-invalidations';
import type { InvalidationScope } from '../../src/ports/cache-store';

const database: InvalidationScope = { scope: 'aaa' };
const server: InvalidationScope = { server: 'sss' };

/** Resolves once `check` passes, retrying until `timeoutMs`. */
async function eventually(check: () => void, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

const fail = () => Promise.reject(new Error('the store is away'));

/** A promise settled from outside, to order attempts by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe('PendingInvalidations', () => {
  let storeAnswers = false;
  /** What the next attempt does, when a test scripts it; else the store answers or not. */
  let next: (() => Promise<number>) | undefined;
  /** Runs one invalidation of `place` whose attempt does `attempt`. */
  const runWith = (place: InvalidationScope, attempt: () => Promise<number>) => {
    next = attempt;
    const running = pending.run(place);
    next = undefined;
    return running;
  };
  let pending: PendingInvalidations;

  beforeEach(() => {
    storeAnswers = false;
    next = undefined;
    pending = new PendingInvalidations(() =>
      next ? next() : storeAnswers ? Promise.resolve(0) : fail(),
    );
  });
  afterEach(() => pending.stop());

  it('passes a success through and keeps nothing', async () => {
    expect(await runWith(database, async () => 3)).toBe(3);
    expect(pending.size).toBe(0);
    expect(pending.covers('aaa', 'sss')).toBe(false);
  });

  it('keeps a failed one, coalesced per place, and rethrows the failure', async () => {
    await expect(runWith(database, fail)).rejects.toThrow('the store is away');
    await expect(runWith(database, fail)).rejects.toThrow();
    await expect(runWith(server, fail)).rejects.toThrow();

    expect(pending.size).toBe(2);
    expect(pending.covers('aaa', 'other')).toBe(true);
    expect(pending.covers('other', 'sss')).toBe(true);
    expect(pending.covers('other', 'other')).toBe(false);
  });

  it('is cleared by an invalidation begun after the failed one, not by one begun before', async () => {
    const earlier = deferred<number>();
    const earlierRun = runWith(database, () => earlier.promise);
    await expect(runWith(database, fail)).rejects.toThrow();

    // Began first, so it may have run in the store before the failed one's write: it does not count.
    earlier.resolve(1);
    await earlierRun;
    expect(pending.size).toBe(1);

    await runWith(database, async () => 0);
    expect(pending.size).toBe(0);
  });

  it('retries in the background until the store answers', async () => {
    await expect(runWith(database, fail)).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, RETRY_INTERVAL_MS * 3));
    expect(pending.size).toBe(1);

    storeAnswers = true;
    await eventually(() => expect(pending.size).toBe(0), RETRY_INTERVAL_MS * 20);
  });

  it('stops retrying once stopped, and retryAll() still tries once', async () => {
    await expect(runWith(database, fail)).rejects.toThrow();
    pending.stop();
    storeAnswers = true;
    await new Promise((resolve) => setTimeout(resolve, RETRY_INTERVAL_MS * 3));
    expect(pending.size).toBe(1);

    await pending.retryAll();
    expect(pending.size).toBe(0);
  });
});
