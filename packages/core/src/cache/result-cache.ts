import type { Clock } from '../ports/clock';
import { systemClock } from '../ports/clock';
import type {
  CachedResult,
  CacheEntryRecord,
  CacheStore,
  CacheUsage,
  WriteMark,
} from '../ports/cache-store';
import type { CacheScope, RowMode, StatementResult } from '../ports/connections';
import type { ParsedStatement } from '../parser/types';
import type { CacheRequest } from '../request';
import { serializeResponse } from '../json/serialize-response';
import { toCacheEntry, type CacheEntry } from './cache-entry';
import { cacheKey } from './cache-key';
import { isCacheableStatement, isCacheRequested } from './cacheability';
import { ReadFlights } from './read-flights';

export interface ResultCacheOptions {
  store: CacheStore;
  /** TTL of an entry when the request names none. */
  defaultTtlMs: number;
  /** Results whose JSON is longer than this are never cached. */
  maxEntryBytes: number;
  /** Cache when the request says nothing (`QUERY_CACHE_DEFAULT=on`). */
  enabledByDefault: boolean;
  /** Wall-clock time of caching, shown as `timestamp`. Default: the system clock. */
  clock?: Pick<Clock, 'date'>;
}

/** What decides a key besides the statement and its target. */
export interface CacheKeyOptions {
  params?: readonly unknown[];
  rowMode: RowMode;
  maxRows: number;
}

export interface StoreResultArgs {
  /** From `keyFor`. */
  key: string;
  /** The database and credentials the statement ran on. */
  scope: CacheScope;
  statement: ParsedStatement;
  result: StatementResult;
  /** Milliseconds the statement took in PostgreSQL. */
  executionTime: number;
  /** The request's own TTL: how long the entry is fresh; absent: the default. */
  ttlMs?: number;
  /** How long after that it may be served stale (the request's `swrMs`); absent: not at all. */
  swrMs?: number;
  /**
   * From `markBeforeRead()`, taken before the statement ran. When given, a result that a write to
   * the same database (or server) may have overtaken is not stored: the write's invalidation has
   * already run, so nothing else would remove it.
   */
  readMark?: WriteMark;
}

/**
 * What became of a result offered to the cache: kept, or why not: the statement is not cacheable,
 * the result is over the byte bound, or the store refused it (a write overtook the read, or the
 * entry did not fit the store's own bounds).
 */
export type StoreVerdict = 'stored' | 'not-cacheable' | 'oversize' | 'refused';

/** A cached entry found, and whether it is past its fresh time. */
export interface FoundEntry {
  record: CacheEntryRecord;
  /** Past `freshMs`: serve it only to a request whose `swrMs` reaches this far. */
  stale: boolean;
  /** Milliseconds since it was cached. */
  ageMs: number;
}

/**
 * The result-cache use case: which statements may be cached, under which key, and keeping the
 * cache consistent with writes made through the service. Storage is the `CacheStore` port.
 */
export class ResultCache {
  private readonly cacheStore: CacheStore;
  private readonly defaultTtlMs: number;
  private readonly maxEntryBytes: number;
  private readonly enabledByDefault: boolean;
  private readonly clock: Pick<Clock, 'date'>;
  /** Misses being read now, which identical misses wait for (single-flight, per instance). */
  readonly flights = new ReadFlights<StatementResult>();
  /** Keys whose stale entry is being refreshed by this instance: one refresh at a time each. */
  private readonly refreshing = new Set<string>();

  constructor(options: ResultCacheOptions) {
    this.cacheStore = options.store;
    this.defaultTtlMs = options.defaultTtlMs;
    this.maxEntryBytes = options.maxEntryBytes;
    this.enabledByDefault = options.enabledByDefault;
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Whether this statement of this request may be served from and kept in the cache: the request
   * must ask (or the server cache by default, unless the request says `cache: false`), and the
   * statement must be a read with no volatile function and no effect on the session.
   */
  isCacheable(statement: ParsedStatement, request: { cache?: CacheRequest }): boolean {
    return this.isCacheRequested(request) && isCacheableStatement(statement);
  }

  /** The request asks for the cache, or says nothing while the server caches by default. */
  isCacheRequested(request: { cache?: CacheRequest }): boolean {
    return isCacheRequested(request.cache, this.enabledByDefault);
  }

  /**
   * The key of `statement` run on `scope` with these options. Same inputs, same key. The key holds
   * the database reached and the credentials, not the host's spelling or the sslMode: every way of
   * naming one database shares its entries, and so does their invalidation (docs/decisions.md 10.20).
   */
  keyFor(scope: CacheScope, statement: ParsedStatement, options: CacheKeyOptions): string {
    const parts = {
      scope: `${scope.database}\u0000${scope.credentials}`,
      text: statement.text,
      rowMode: options.rowMode,
      maxRows: options.maxRows,
    };
    return cacheKey(options.params === undefined ? parts : { ...parts, params: options.params });
  }

  /** The cached entry (one more hit counted) and its age, or undefined. */
  async lookup(key: string): Promise<FoundEntry | undefined> {
    const record = await this.cacheStore.get(key);
    if (record === undefined) return undefined;
    const ageMs = this.clock.date().getTime() - record.cachedAt.getTime();
    return { record, ageMs, stale: ageMs > record.freshMs };
  }

  /** A point to pass as `readMark` to `store()`: take it before the statement runs. */
  markBeforeRead(scope: CacheScope): Promise<WriteMark> {
    return this.cacheStore.mark({ scope: scope.database, server: scope.server });
  }

  /**
   * Starts `refresh` for `key` unless this instance already refreshes it: a stale entry served to
   * many requests is read again once (docs/decisions.md 10.27). Failures are the refresh's own.
   */
  refreshOnce(key: string, refresh: () => Promise<void>): void {
    if (this.refreshing.has(key)) return;
    this.refreshing.add(key);
    void refresh()
      .catch(() => undefined)
      .finally(() => this.refreshing.delete(key));
  }

  /**
   * Keeps a statement's result, and says whether it did: `stored`, or why not: the statement is
   * not cacheable, the result is over the byte bound or cannot be measured (`oversize`), or the
   * store refused it, above all because a write to the scope happened since `readMark`.
   */
  async store(args: StoreResultArgs): Promise<StoreVerdict> {
    if (!isCacheableStatement(args.statement)) return 'not-cacheable';
    const result: CachedResult = {
      rows: args.result.rows,
      fields: args.result.fields,
      rowCount: args.result.rowCount,
      command: args.result.command,
      truncated: args.result.truncated,
    };
    const sizeBytes = byteLengthOfJson(result);
    if (sizeBytes === undefined || sizeBytes > this.maxEntryBytes) return 'oversize';
    const record: CacheEntryRecord = {
      key: args.key,
      scope: args.scope.database,
      server: args.scope.server,
      query: args.statement.text,
      reads: args.statement.relations.reads === null ? null : [...args.statement.relations.reads],
      result,
      sizeBytes,
      executionTime: args.executionTime,
      cachedAt: this.clock.date(),
      freshMs: args.ttlMs ?? this.defaultTtlMs,
      hits: 0,
    };
    const kept = await this.cacheStore.set(
      record,
      record.freshMs + (args.swrMs ?? 0),
      args.readMark,
    );
    return kept ? 'stored' : 'refused';
  }

  /**
   * After a write through the service: removes every entry of the written database, for every
   * user, or of every database of its server when `extent` is `server` (docs/decisions.md 10.20).
   * Finer invalidation by the relations written is not attempted: triggers, rules, foreign-key
   * cascades and views make a write reach relations its text does not name, and only the catalog
   * could prove otherwise. Resolves to the number removed.
   */
  async invalidate(scope: CacheScope, extent: 'database' | 'server'): Promise<number> {
    // The store refuses, from now on, results of reads marked before this (docs/decisions.md 10.27).
    const where = extent === 'server' ? { server: scope.server } : { scope: scope.database };
    return this.cacheStore.invalidate(where, null);
  }

  /** The most recently cached entries, newest first, as GET /api/stats/cache lists them. */
  async recentEntries(limit = 10): Promise<CacheEntry[]> {
    const records = await this.cacheStore.recent(limit);
    return records.map(toCacheEntry);
  }

  /** The store's usage; undefined when the store cannot tell. */
  usage(): Promise<CacheUsage> | undefined {
    return this.cacheStore.usage?.();
  }

  async size(): Promise<number> {
    return this.cacheStore.size();
  }

  /** Removes every entry (DELETE /api/stats/cache). */
  async clear(): Promise<void> {
    await this.cacheStore.clear();
  }

  /** Releases the store. */
  async close(): Promise<void> {
    await this.cacheStore.close?.();
  }
}

/**
 * Bytes of the JSON the entry would be served as (json values as PostgreSQL's text, as the response
 * writes them); undefined when it cannot be serialised.
 */
function byteLengthOfJson(result: CachedResult): number | undefined {
  try {
    return Buffer.byteLength(serializeResponse(result));
  } catch {
    return undefined;
  }
}
