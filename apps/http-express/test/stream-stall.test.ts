import { stallLimitOf } from '../src/stream-endpoint';
import { TIMER_MAX_MS } from '../src/timer-limit';

describe('how long a streamed answer waits for a client that takes nothing', () => {
  it('is the request timeout and 2 s more, 60 s without one', () => {
    expect(stallLimitOf({ timeoutMs: 1_000 })).toBe(3_000);
    expect(stallLimitOf({})).toBe(60_000);
    expect(stallLimitOf(null)).toBe(60_000);
  });

  it('never exceeds what a Node timer can wait (a longer delay would fire after 1 ms)', () => {
    // The schema takes timeoutMs up to 2^31 - 1: 2 s more would not fit a timer.
    for (const timeoutMs of [TIMER_MAX_MS - 2_000, TIMER_MAX_MS - 1_999, TIMER_MAX_MS]) {
      expect(stallLimitOf({ timeoutMs })).toBeLessThanOrEqual(TIMER_MAX_MS);
    }
    expect(stallLimitOf({ timeoutMs: TIMER_MAX_MS })).toBe(TIMER_MAX_MS);
  });
});
