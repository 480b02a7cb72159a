/** A worker's counters (docs/decisions.md 10.28): batched to the primary, never one IPC per request. */
import type { CounterTotals } from '@sqlgate/core';
import { ClusterCounters, COUNTER_FLUSH_MS } from '../../src/cluster/cluster-counters';
import type { PrimaryLink } from '../../src/cluster/worker-channel';

const one = (hits: number, misses: number): CounterTotals => ({
  hits,
  misses,
  executed: misses,
  executionMs: misses * 2,
});

function fakePrimary() {
  const notices: CounterTotals[] = [];
  const asked: CounterTotals[] = [];
  const sums: CounterTotals = { hits: 0, misses: 0, executed: 0, executionMs: 0 };
  const add = (delta: CounterTotals) => {
    sums.hits += delta.hits;
    sums.misses += delta.misses;
    sums.executed += delta.executed;
    sums.executionMs += delta.executionMs;
  };
  const link = {
    notify: async (_type: string, delta: CounterTotals) => {
      notices.push(delta);
      add(delta);
    },
    request: async (_type: string, { pending }: { pending: CounterTotals }) => {
      asked.push(pending);
      add(pending);
      return { ...sums };
    },
  } as unknown as PrimaryLink;
  return { link, notices, asked };
}

describe('ClusterCounters', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the counts of many requests in one batch', () => {
    const { link, notices } = fakePrimary();
    const counters = new ClusterCounters(link);
    for (let index = 0; index < 100; index++) counters.add(one(1, 1));
    expect(notices).toEqual([]);
    jest.advanceTimersByTime(COUNTER_FLUSH_MS);
    expect(notices).toEqual([{ hits: 100, misses: 100, executed: 100, executionMs: 200 }]);
    // Nothing pending, nothing sent.
    jest.advanceTimersByTime(COUNTER_FLUSH_MS * 3);
    expect(notices).toHaveLength(1);
  });

  it('sends its pending counts with a question for the totals, and never twice', async () => {
    const { link, notices, asked } = fakePrimary();
    const counters = new ClusterCounters(link);
    counters.add(one(2, 1));
    await expect(counters.totals()).resolves.toEqual({
      hits: 2,
      misses: 1,
      executed: 1,
      executionMs: 2,
    });
    expect(asked).toEqual([one(2, 1)]);
    jest.advanceTimersByTime(COUNTER_FLUSH_MS);
    expect(notices).toEqual([]);
  });

  it('flushes at close, ignoring a non-finite time', async () => {
    const { link, notices } = fakePrimary();
    const counters = new ClusterCounters(link);
    counters.add({ hits: 0, misses: 1, executed: 1, executionMs: Number.NaN });
    await counters.close();
    expect(notices).toEqual([{ hits: 0, misses: 1, executed: 1, executionMs: 0 }]);
  });
});
