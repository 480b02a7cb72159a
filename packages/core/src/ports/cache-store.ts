/**
 * The result-cache port. Asynchronous so that a store shared by several instances (Redis) can
 * implement it without touching core. The default implementation is in-memory (lru-cache).
 */

/** A cached statement result, as the response shows it. */
export interface CachedResult {
  rows: unknown[];
  fields: unknown[];
  rowCount: number | null;
  command: string | null;
  truncated: boolean;
}

export interface CacheEntryRecord {
  /** The full cache key (credential-scoped target, statement, params, rowMode, maxRows). */
  key: string;
  /** The database reached (`CacheScope.database`): a write invalidates every user's entries of it. */
  scope: string;
  /** The server reached (`CacheScope.server`): some writes invalidate every database of it. */
  server: string;
  /** Normalised statement text, as shown in GET /api/stats/cache. */
  query: string;
  /** Relations the statement reads; null when unknown (then any write to the scope invalidates it). */
  reads: string[] | null;
  result: CachedResult;
  /** Approximate size in bytes (its JSON length), for the byte bound. */
  sizeBytes: number;
  /** Milliseconds the statement took in PostgreSQL. */
  executionTime: number;
  cachedAt: Date;
  /** Times it was served. */
  hits: number;
}

export interface CacheUsage {
  entries: number;
  bytes: number;
  /** Entries removed to make room (not expired, replaced, invalidated or cleared), since start. */
  evictions: number;
}

/** Which entries an invalidation covers: one database's, or every database's of one server. */
export type InvalidationScope = { scope: string } | { server: string };

export interface CacheStore {
  /** The entry, counting one more hit; undefined when absent or expired. */
  get(key: string): Promise<CacheEntryRecord | undefined>;
  set(entry: CacheEntryRecord, ttlMs: number): Promise<void>;
  /**
   * Removes the entries of a database (`{ scope }`: records with that `scope`) or of a whole server
   * (`{ server }`) that read any of `relations`, or all of them when `relations` is null. Resolves
   * to the number removed.
   */
  invalidate(where: InvalidationScope, relations: string[] | null): Promise<number>;
  clear(): Promise<void>;
  /** Live entries. */
  size(): Promise<number>;
  /** The most recently cached entries, newest first. */
  recent(limit: number): Promise<CacheEntryRecord[]>;
  /** Live entries, their bytes, and entries evicted for room so far (metrics). Optional. */
  usage?(): Promise<CacheUsage>;
  close?(): Promise<void>;
}
