/**
 * One process's token buckets, bounded: a bucket that has refilled is the same as none, so it is
 * forgotten; past `maxKeys`, full buckets go first, then the least recently used.
 */
import type { LimitDecision, RateRule } from '../ports/limit-store';
import { takeToken, type BucketState } from './token-bucket';

/** Oldest buckets looked at after each take, so that idle ones go without a timer or a sweep. */
const IDLE_CHECKS_PER_TAKE = 2;
/** The share of `maxKeys` dropped, least recently used first, when no full bucket makes room. */
const EVICTED_SHARE = 0.1;

export class MemoryBuckets {
  /** In order of last take, oldest first: a take moves its bucket to the end. */
  private readonly buckets = new Map<string, BucketState>();

  constructor(
    private readonly clock: { now(): number },
    private readonly maxKeys: number,
  ) {}

  take(key: string, rule: RateRule): LimitDecision {
    const now = this.clock.now();
    const bucket = this.buckets.get(key);
    const { decision, next } = takeToken(bucket, rule, now);
    // A refusal changes nothing: the level is computed again from the same state next time.
    if (next === undefined) return decision;
    if (bucket === undefined) this.makeRoom(now);
    else this.buckets.delete(key);
    this.buckets.set(key, next);
    this.forgetOldestIfFull(now);
    return decision;
  }

  get size(): number {
    return this.buckets.size;
  }

  clear(): void {
    this.buckets.clear();
  }

  private forgetOldestIfFull(now: number): void {
    let checked = 0;
    for (const [key, bucket] of this.buckets) {
      if (checked++ >= IDLE_CHECKS_PER_TAKE) return;
      if (now >= bucket.fullAt) this.buckets.delete(key);
    }
  }

  /**
   * Makes room for one more bucket. Dropping a bucket that is not full gives its key a full one
   * again, so full ones go first; the share evicted after that keeps the next sweeps rare.
   */
  private makeRoom(now: number): void {
    if (this.buckets.size < this.maxKeys) return;
    for (const [key, bucket] of this.buckets) {
      if (now >= bucket.fullAt) this.buckets.delete(key);
    }
    if (this.buckets.size < this.maxKeys) return;
    let evict = Math.max(1, Math.ceil(this.maxKeys * EVICTED_SHARE));
    for (const key of this.buckets.keys()) {
      if (evict-- <= 0) return;
      this.buckets.delete(key);
    }
  }
}
