import { DEFAULT_ANSWER_STALL_TIMEOUT_MS, streamStallLimit } from '../src/answer-stall';
import { loadConfig } from '../src/config';
import { TIMER_MAX_MS } from '../src/timer-limit';

describe('how long a streamed answer waits for a client that takes nothing', () => {
  it('is the request timeout and 2 s more, ANSWER_STALL_TIMEOUT_MS without one', () => {
    expect(streamStallLimit({ timeoutMs: 1_000 }, 60_000)).toBe(3_000);
    expect(streamStallLimit({}, 60_000)).toBe(60_000);
    expect(streamStallLimit(null, 5_000)).toBe(5_000);
  });

  it('never exceeds what a Node timer can wait (a longer delay would fire after 1 ms)', () => {
    // The schema takes timeoutMs up to 2^31 - 1: 2 s more would not fit a timer.
    for (const timeoutMs of [TIMER_MAX_MS - 2_000, TIMER_MAX_MS - 1_999, TIMER_MAX_MS]) {
      expect(streamStallLimit({ timeoutMs }, 60_000)).toBeLessThanOrEqual(TIMER_MAX_MS);
    }
    expect(streamStallLimit({ timeoutMs: TIMER_MAX_MS }, 60_000)).toBe(TIMER_MAX_MS);
  });
});

describe('ANSWER_STALL_TIMEOUT_MS', () => {
  it('defaults to 60 s and refuses what a timer cannot wait', () => {
    expect(DEFAULT_ANSWER_STALL_TIMEOUT_MS).toBe(60_000);
    expect(loadConfig({}).answerStallTimeoutMs).toBe(60_000);
    expect(loadConfig({ ANSWER_STALL_TIMEOUT_MS: '2500' }).answerStallTimeoutMs).toBe(2_500);
    expect(() => loadConfig({ ANSWER_STALL_TIMEOUT_MS: '0' })).toThrow(/ANSWER_STALL_TIMEOUT_MS/);
    expect(() => loadConfig({ ANSWER_STALL_TIMEOUT_MS: String(TIMER_MAX_MS + 1) })).toThrow(
      /ANSWER_STALL_TIMEOUT_MS/,
    );
  });
});
