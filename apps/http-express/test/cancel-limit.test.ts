/**
 * The limit of failed cancels per client (docs/decisions.md 10.34), on a clock of the test's own:
 * how failures are counted, given back and forgiven with time.
 */
import {
  FAILED_CANCEL_REFILL_MS,
  FAILED_CANCELS_PER_CLIENT,
  FailedCancelLimit,
  LimitedCancels,
} from '../src/cancel-limit';

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('failed cancels per client', () => {
  it('lets a client fail its share, then makes it wait for one more per refill', () => {
    const time = clock();
    const limit = new FailedCancelLimit(time.now);
    for (let failure = 0; failure < FAILED_CANCELS_PER_CLIENT; failure++) {
      expect(limit.take('a')).toBe(0);
    }
    expect(limit.take('a')).toBe(FAILED_CANCEL_REFILL_MS);
    expect(limit.take('b')).toBe(0);
    time.advance(FAILED_CANCEL_REFILL_MS / 2);
    expect(limit.take('a')).toBe(FAILED_CANCEL_REFILL_MS / 2);
    time.advance(FAILED_CANCEL_REFILL_MS / 2);
    expect(limit.take('a')).toBe(0);
    expect(limit.take('a')).toBe(FAILED_CANCEL_REFILL_MS);
  });

  it('gives back the failure of a cancel that cancelled something', () => {
    const limit = new FailedCancelLimit(clock().now);
    for (let turn = 0; turn < 3 * FAILED_CANCELS_PER_CLIENT; turn++) {
      expect(limit.take('owner')).toBe(0);
      limit.succeeded('owner');
    }
  });

  it('counts a cancel before it is tried: side by side, only the share is tried', async () => {
    let tried = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const cancels = new LimitedCancels(async () => {
      tried += 1;
      await held;
      return false;
    }, new FailedCancelLimit(clock().now));
    const verdicts = Array.from({ length: 50 }, () => cancels.cancel('id', {}, 'guesser'));
    release();
    const settled = await Promise.all(verdicts);
    expect(tried).toBe(FAILED_CANCELS_PER_CLIENT);
    expect(settled.filter((verdict) => 'retryAfterMs' in verdict)).toHaveLength(
      50 - FAILED_CANCELS_PER_CLIENT,
    );
  });
});
