/**
 * The statistics counters in one Redis hash, summed over every instance.
 *
 * `add` only sums into this process's pending counts; a timer sends them every flush interval.
 * Counts are sent in numbered batches, and Redis applies a batch only if its number is above the
 * last one it applied for this process (one script does both), so a batch whose reply was lost
 * (a timeout after Redis had applied it) can be sent again without being counted twice, and a
 * batch Redis never saw is sent again until it is applied: nothing is lost or counted twice.
 */
import { randomBytes } from 'node:crypto';
import type { CounterTotals, SharedCounters } from '@sqlgate/core';
import type { RedisConnection } from './redis-connection';

interface Batch {
  sequence: number;
  counts: CounterTotals;
}

/**
 * Batches kept unacknowledged at most: while Redis is away, new counts wait in `pending` (summed)
 * rather than in ever more batches, so what is resent stays small.
 */
const MAX_UNACKNOWLEDGED_BATCHES = 4;

export class RedisCounters implements SharedCounters {
  /** Identifies this process's batches in Redis. */
  private readonly instanceId = randomBytes(12).toString('hex');
  private pending = zero();
  private lastSequence = 0;
  /** Sent (perhaps applied) but not acknowledged, oldest first. */
  private unacknowledged: Batch[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly connection: RedisConnection,
    private readonly prefix: string,
    flushMs: number,
    /** Closes the whole RedisCache: the counters share their client with the store. */
    private readonly closeAll: () => Promise<void>,
  ) {
    this.timer = setInterval(() => {
      if (this.hasCounts()) this.send().catch(() => undefined);
    }, flushMs);
    // Counts not sent when the process ends are lost; close() sends them.
    this.timer.unref();
  }

  /** Sums `delta` into the pending counts. No I/O; never throws. */
  add(delta: CounterTotals): void {
    this.pending.hits += whole(delta?.hits);
    this.pending.misses += whole(delta?.misses);
    this.pending.executed += whole(delta?.executed);
    // As the in-memory counters: a negative or non-finite time counts as 0.
    const time = delta?.executionMs;
    if (typeof time === 'number' && Number.isFinite(time) && time > 0) {
      this.pending.executionMs += time;
    }
  }

  /** Every instance's totals, after sending this instance's pending counts, in one round trip. */
  async totals(): Promise<CounterTotals> {
    return this.send();
  }

  /** Stops the timer and sends what is pending, once, best effort. For RedisCache.close(). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.hasCounts()) await this.send().catch(() => undefined);
  }

  close(): Promise<void> {
    return this.closeAll();
  }

  /** Sends the unacknowledged batches and the pending counts; resolves to the totals. */
  private async send(): Promise<CounterTotals> {
    if (!isZero(this.pending) && this.unacknowledged.length < MAX_UNACKNOWLEDGED_BATCHES) {
      this.unacknowledged.push({ sequence: ++this.lastSequence, counts: this.pending });
      this.pending = zero();
    }
    const batches = [...this.unacknowledged];
    const args: (string | number)[] = [this.prefix, this.instanceId];
    for (const { sequence, counts } of batches) {
      args.push(sequence, counts.hits, counts.misses, counts.executed, String(counts.executionMs));
    }
    const reply = (await this.connection.script('sqlgateAddCounters', args)) as string[];
    // Every batch sent is applied now (by this call or an earlier one); later ones stay.
    const acknowledged = batches.at(-1)?.sequence ?? 0;
    this.unacknowledged = this.unacknowledged.filter((batch) => batch.sequence > acknowledged);
    // Counts added meanwhile: batched by a flush sent after this call (Redis answers in order, so
    // the reply cannot include them), or still pending.
    return [...this.unacknowledged.map((batch) => batch.counts), this.pending].reduce(
      plus,
      totalsFrom(reply),
    );
  }

  private hasCounts(): boolean {
    return this.unacknowledged.length > 0 || !isZero(this.pending);
  }
}

function zero(): CounterTotals {
  return { hits: 0, misses: 0, executed: 0, executionMs: 0 };
}

function isZero(counts: CounterTotals): boolean {
  return (
    counts.hits === 0 && counts.misses === 0 && counts.executed === 0 && counts.executionMs === 0
  );
}

function plus(a: CounterTotals, b: CounterTotals): CounterTotals {
  return {
    hits: a.hits + b.hits,
    misses: a.misses + b.misses,
    executed: a.executed + b.executed,
    executionMs: a.executionMs + b.executionMs,
  };
}

function whole(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

/** HGETALL's flat [field, value, ...] reply as totals; absent fields are 0. */
function totalsFrom(reply: string[]): CounterTotals {
  const totals = zero();
  for (let index = 0; index + 1 < reply.length; index += 2) {
    const field = reply[index] as keyof CounterTotals;
    if (field in totals) totals[field] = Number(reply[index + 1]);
  }
  return totals;
}
