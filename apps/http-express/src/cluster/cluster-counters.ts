/**
 * A worker's counters for GET /api/stats/cache (docs/decisions.md 10.28): the primary holds the
 * sums of every worker. A request's counts are added here, on the request path, without any IPC;
 * they go to the primary in one batch at most every COUNTER_FLUSH_MS, and before each reading of
 * the totals (so a worker always sees its own requests counted).
 */
import type { CounterTotals, SharedCounters } from '@sqlgate/core';
import { countableMs, zeroTotals } from '@sqlgate/core';
import { STATISTICS_TIMEOUT_MS, type PrimaryLink } from './worker-channel';

/** How long counts may wait before they are sent; other workers see them this much later. */
export const COUNTER_FLUSH_MS = 50;

export class ClusterCounters implements SharedCounters {
  private pending = zeroTotals();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(private readonly primary: PrimaryLink) {}

  add(delta: CounterTotals): void {
    this.pending.hits += delta.hits;
    this.pending.misses += delta.misses;
    this.pending.executed += delta.executed;
    this.pending.executionMs += countableMs(delta.executionMs);
    // One timer per batch, none while idle; it never keeps the process alive.
    if (this.flushTimer === undefined) {
      this.flushTimer = setTimeout(() => void this.flush(), COUNTER_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /** Every worker's totals, this worker's pending counts included (sent with the question). */
  totals(): Promise<CounterTotals> {
    return this.primary.request(
      'counterTotals',
      { pending: this.takePending() },
      STATISTICS_TIMEOUT_MS,
    );
  }

  /** Sends what is pending and resolves once it is written: the process may exit next. */
  close(): Promise<void> {
    return this.flush();
  }

  /** Sends the pending counts, if any; resolves once they are written. */
  flush(): Promise<void> {
    const pending = this.takePending();
    const any = pending.hits + pending.misses + pending.executed > 0 || pending.executionMs > 0;
    return any ? this.primary.notify('counters', pending) : Promise.resolve();
  }

  private takePending(): CounterTotals {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const pending = this.pending;
    this.pending = zeroTotals();
    return pending;
  }
}
