/**
 * The result-cache port; asynchronous so a shared store (Redis) can implement it. Coherence
 * (docs/decisions.md 10.27): once `invalidate` resolved, no instance serves what it covers, and no
 * read marked before it can put an older result back.
 */

/** A cached statement result, as the response shows it. */
export interface CachedResult {
  rows: unknown[];
  fields: unknown[];
  rowCount: number | null;
  command: string | null;
  truncated: boolean;
  /** With `truncated`: the limit that cut the rows (only `maxRows` ever is, for a kept result). */
  truncatedBy?: 'rows' | 'bytes';
}

/** Where an entry belongs: the database reached and its server (`CacheScope`). */
export interface EntryPlace {
  /** The database reached (`CacheScope.database`): a write invalidates every user's entries of it. */
  scope: string;
  /** The server reached (`CacheScope.server`): some writes invalidate every database of it. */
  server: string;
}

export interface CacheEntryRecord extends EntryPlace {
  /** The full cache key (credential-scoped target, statement, params, rowMode, maxRows). */
  key: string;
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
  /** Milliseconds after `cachedAt` it is fresh; stale after, until its TTL, for `swrMs` requests. */
  freshMs: number;
  /** Times it was served. */
  hits: number;
}

/** What GET /api/stats/cache lists of an entry. */
export type CacheEntrySummary = Pick<
  CacheEntryRecord,
  'key' | 'query' | 'executionTime' | 'cachedAt' | 'hits'
>;

export interface CacheUsage {
  entries: number;
  bytes: number;
  /** Entries removed to make room (not expired, replaced, invalidated or cleared), since start. */
  evictions: number;
}

/** Which entries an invalidation covers: one database's, or every database's of one server. */
export type InvalidationScope = { scope: string } | { server: string };

/** A point in a place's invalidations, taken before a read runs; opaque, compared for equality. */
export type WriteMark = string;

/** When a lookup happens, and how far past its fresh time an entry may be served to it. */
export interface Freshness {
  /** Now, in milliseconds since the epoch, by the clock that set `cachedAt`. */
  nowMs: number;
  /** An entry is served while `nowMs - cachedAt <= freshMs + staleAcceptedMs`. */
  staleAcceptedMs: number;
}

export interface CacheStore {
  /** The entry, counting a hit; undefined when absent, expired, invalidated or too stale. */
  get(key: string, freshness?: Freshness): Promise<CacheEntryRecord | undefined>;
  /** The current point in the invalidations of `place`'s database and server. */
  mark(place: EntryPlace): Promise<WriteMark>;
  /**
   * Keeps `entry` for `ttlMs` and resolves true; false when an invalidation covering it ran since
   * `mark`. A TTL that is not positive, or an entry over bounds, removes the key instead (false).
   */
  set(entry: CacheEntryRecord, ttlMs: number, mark?: WriteMark): Promise<boolean>;
  /**
   * Removes a database's or server's entries that read any of `relations` (all when null) and
   * advances their marks; resolves to the number removed once no instance will serve them.
   */
  invalidate(where: InvalidationScope, relations: string[] | null): Promise<number>;
  clear(): Promise<void>;
  /** Live entries (of every instance sharing the store). */
  size(): Promise<number>;
  /** The most recently cached entries, newest first, without their rows. */
  recent(limit: number): Promise<CacheEntrySummary[]>;
  /** Live entries, their bytes, and entries evicted for room so far (metrics). Optional. */
  usage?(): Promise<CacheUsage>;
  /** Resolves once the store answered one round trip within its bound. A memory store need not. */
  ping?(): Promise<void>;
  close?(): Promise<void>;
}

/** What GET /api/stats/cache counts (docs/decisions.md 8), as sums that instances can add up. */
export interface CounterTotals {
  /** Statements served from the result cache. */
  hits: number;
  /** Every other statement handled. */
  misses: number;
  /** Statements that ran in PostgreSQL (a subset of `misses`). */
  executed: number;
  /** Milliseconds those statements took, summed. */
  executionMs: number;
}

/** Counters every instance can read (docs/decisions.md 10.27); `add` must not wait: batch. */
export interface SharedCounters {
  /** Adds one request's counts. Never throws; counts that cannot be sent yet are kept and sent later. */
  add(delta: CounterTotals): void;
  /** The totals of every instance, this one's pending counts included. Rejects when unreadable. */
  totals(): Promise<CounterTotals>;
  close?(): Promise<void>;
}
