/**
 * Counters behind GET /api/stats/cache (CacheStats in docs/interface.md, docs/decisions.md 8). Pure: the service
 * tells it what happened to each statement and asks for a snapshot.
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

/**
 * Counts statements and keeps a running mean of execution times. Memory stays constant however
 * many statements are recorded: no samples are kept.
 */
export class QueryStatistics {
  private cacheHits = 0;
  private cacheMisses = 0;
  private executed = 0;
  private meanExecutionTime = 0;

  /**
   * A statement that ran in PostgreSQL (successfully or not). It counts as a miss: only results
   * served from the cache are hits, whether or not the statement could have been cached.
   * A negative or non-finite time counts as 0, so one bad measurement cannot poison the mean.
   */
  recordExecuted(executionTimeMs: number): void {
    const time = Number.isFinite(executionTimeMs) && executionTimeMs > 0 ? executionTimeMs : 0;
    this.cacheMisses += 1;
    this.executed += 1;
    // Incremental mean: exact enough for milliseconds and needs no running sum that could grow large.
    this.meanExecutionTime += (time - this.meanExecutionTime) / this.executed;
  }

  /** A statement whose result came from the cache: it did not run, so the mean is untouched. */
  recordCacheHit(): void {
    this.cacheHits += 1;
  }

  /**
   * A statement of a request that never reached the database (an earlier statement failed, or the
   * request was cancelled): handled, so it is a miss, but it has no execution time to average.
   */
  recordNotExecuted(): void {
    this.cacheMisses += 1;
  }

  /** The counters now, with the cache's current number of live entries. */
  snapshot(cacheSize: number): CacheStats {
    const totalQueries = this.cacheHits + this.cacheMisses;
    return {
      totalQueries,
      cacheHits: this.cacheHits,
      cacheMisses: this.cacheMisses,
      hitRate: totalQueries === 0 ? 0 : roundTo((this.cacheHits / totalQueries) * 100, 2),
      avgExecutionTime: this.executed === 0 ? 0 : roundTo(this.meanExecutionTime, 3),
      cacheSize,
    };
  }
}
