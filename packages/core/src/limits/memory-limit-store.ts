import type { Clock } from '../ports/clock';
import type { LimitStore } from '../ports/limit-store';
import { MemoryBuckets } from './memory-buckets';
import { MemorySlots } from './memory-slots';
import { requireConcurrencyCap, requireRateRule } from './rules';

/** Buckets kept at most by default: about 100 bytes each, so some 10 MB. */
export const DEFAULT_LIMIT_MAX_KEYS = 100_000;

export interface MemoryLimitStoreOptions {
  /** Token buckets kept at most; past it, full ones are forgotten first, then the least recently used. Default 100,000. */
  maxKeys?: number;
}

/** A `LimitStore` in this process's memory, and what it holds (for metrics and tests). */
export interface MemoryLimitStore extends LimitStore {
  /** Keys held: token buckets not yet full again, and keys with a slot held. */
  keys(): number;
  close(): Promise<void>;
}

/**
 * The limits of one process (docs/limits.md): every instance counts for itself. No timer: buckets
 * are refilled when next used, and forgotten once they would be full again.
 *
 * @param clock Monotonic milliseconds; injectable so tests can move time. Default `performance.now()`.
 */
export function createMemoryLimitStore(
  clock: Pick<Clock, 'now'> = performance,
  options: MemoryLimitStoreOptions = {},
): MemoryLimitStore {
  const maxKeys = options.maxKeys ?? DEFAULT_LIMIT_MAX_KEYS;
  if (!(Number.isInteger(maxKeys) && maxKeys >= 1)) {
    throw new RangeError('maxKeys must be a positive integer');
  }
  const buckets = new MemoryBuckets(clock, maxKeys);
  const slots = new MemorySlots();
  return {
    take: async (key, rule) => buckets.take(key, requireRateRule(rule)),
    enter: async (key, cap) => slots.enter(key, requireConcurrencyCap(cap)),
    keys: () => buckets.size + slots.size,
    close: async () => {
      buckets.clear();
      slots.clear();
    },
  };
}
