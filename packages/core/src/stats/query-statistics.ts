import type { CounterTotals, SharedCounters } from '../ports/cache-store';

/**
 * Counters behind GET /api/stats/cache (docs/interface.md, docs/decisions.md 8), kept as sums
 * that instances can add together (10.27).
 */

/** CacheStats (docs/interface.md), as GET /api/stats/cache returns it under `stats`. */
export interface CacheStats {
  /** Every statement handled by POST /api/query, cache hits included. */
  totalQueries: number;
  /** Statements served from the result cache. */
  cacheHits: number;
  /** Every other statement, cacheable or not: `cacheHits + cacheMisses === totalQueries`. */
  cacheMisses: number;
  /** `cacheHits / totalQueries × 100`, rounded to 2 decimals; 0 when nothing was handled. */
  hitRate: number;
  /** Mean milliseconds of the statements that ran in the database, rounded to 3 decimals; 0 when none ran. */
  avgExecutionTime: number;
  /** Live entries in the result cache. */
  cacheSize: number;
}

/** The body's `stats` when the statistics cannot be read (docs/interface.md: every field 0). */
export const ZERO_CACHE_STATS: Readonly<CacheStats> = Object.freeze({
  totalQueries: 0,
  cacheHits: 0,
  cacheMisses: 0,
  hitRate: 0,
  avgExecutionTime: 0,
  cacheSize: 0,
});

function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

/** `GET /api/stats/cache`'s figures from summed counts and the cache's live entries. */
export function cacheStatsOf(totals: CounterTotals, cacheSize: number): CacheStats {
  const totalQueries = totals.hits + totals.misses;
  return {
    totalQueries,
    cacheHits: totals.hits,
    cacheMisses: totals.misses,
    hitRate: totalQueries === 0 ? 0 : roundTo((totals.hits / totalQueries) * 100, 2),
    avgExecutionTime: totals.executed === 0 ? 0 : roundTo(totals.executionMs / totals.executed, 3),
    cacheSize,
  };
}

/** A measured time as counted: a negative or non-finite one (a clock's glitch) counts as 0. */
export function countableMs(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** No statement counted yet. */
export function zeroTotals(): CounterTotals {
  return { hits: 0, misses: 0, executed: 0, executionMs: 0 };
}

/**
 * Counts statements in one process, the default `SharedCounters`: only sums are kept, so memory
 * stays constant.
 */
export class QueryStatistics implements SharedCounters {
  private readonly counts = zeroTotals();

  add(delta: CounterTotals): void {
    this.counts.hits += delta.hits;
    this.counts.misses += delta.misses;
    this.counts.executed += delta.executed;
    this.counts.executionMs += countableMs(delta.executionMs);
  }

  async totals(): Promise<CounterTotals> {
    return { ...this.counts };
  }
}
