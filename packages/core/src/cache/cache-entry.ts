import type { CacheEntrySummary } from '../ports/cache-store';

/** CacheEntry (docs/interface.md): one element of `entries` in GET /api/stats/cache. */
export interface CacheEntry {
  /** The cached statement's normalised text. */
  query: string;
  /** Milliseconds the statement took in PostgreSQL when it was cached. */
  executionTime: number;
  /** ISO 8601 time at which it was cached. */
  timestamp: string;
  /** Times the entry was served. */
  hits: number;
}

/** What the statistics endpoint shows of a record: never the rows, the key or the scope. */
export function toCacheEntry(record: CacheEntrySummary): CacheEntry {
  return {
    query: record.query,
    executionTime: record.executionTime,
    timestamp: record.cachedAt.toISOString(),
    hits: record.hits,
  };
}
