import type { Clock } from '../ports/clock';
import { systemClock } from '../ports/clock';
import type {
  CachedResult,
  CacheEntryRecord,
  CacheStore,
  CacheUsage,
  InvalidationScope,
  WriteMark,
} from '../ports/cache-store';
import type { CacheScope, StatementResult } from '../ports/connections';
import type { ParsedStatement } from '../parser/types';
import type { CacheRequest } from '../request';
import { serializeResponse } from '../json/serialize-response';
import { toCacheEntry, type CacheEntry } from './cache-entry';
import { cacheKey, type CacheKeyParts } from './cache-key';
import {
  isCacheableStatement,
  isCacheRequested,
  readsClockThroughParameters,
} from './cacheability';
import { PendingInvalidations, placeKey } from './pending-invalidations';
import { ReadFlights } from './read-flights';
import { ScopeWriteLog } from './scope-write-log';

/** Refreshes of stale entries running at once in this instance; more wait for a later request. */
const MAX_REFRESHES = 4;

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
export type CacheKeyOptions = Omit<CacheKeyParts, 'scope' | 'text'>;

export interface StoreResultArgs {
  /** From `keyFor`. */
  key: string;
  /** The database and credentials the statement ran on. */
  scope: CacheScope;
  statement: ParsedStatement;
  /** The request's `params`, which the key holds: a clock word among them may make it uncacheable. */
  params?: readonly unknown[];
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
  /** Past `freshMs`, within the `swrMs` of the request that looked it up. */
  stale: boolean;
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
  /** Stale entries being refreshed by this instance: one refresh at a time each. */
  private readonly refreshing = new Set<string>();
  /**
   * This instance's writes, recorded before the store is asked to invalidate: a read marked before
   * one is neither kept nor joined, even when the store's own invalidation failed.
   */
  private readonly writes = new ScopeWriteLog();
  /**
   * Invalidations the store did not confirm (it failed or timed out), sent again until it does.
   * Meanwhile this instance neither serves nor keeps entries of those places.
   */
  private readonly unconfirmed = new PendingInvalidations((where) =>
    this.cacheStore.invalidate(where, null),
  );

  constructor(options: ResultCacheOptions) {
    this.cacheStore = options.store;
    this.defaultTtlMs = options.defaultTtlMs;
    this.maxEntryBytes = options.maxEntryBytes;
    this.enabledByDefault = options.enabledByDefault;
    this.clock = options.clock ?? systemClock;
  }

  /** The request asks for the cache, or says nothing while the server caches by default. */
  isCacheRequested(request: { cache?: CacheRequest }): boolean {
    return isCacheRequested(request.cache, this.enabledByDefault);
  }

  /**
   * The key of `statement` run on `scope` with these options. Same inputs, same key. The key holds
   * the endpoint reached and the credentials, not the host's spelling or the sslMode: every way of
   * naming one address shares its entries (docs/decisions.md 10.20); invalidation goes by the
   * database, which covers every endpoint that reaches it (direct, pooled, proxied).
   */
  keyFor(scope: CacheScope, statement: ParsedStatement, options: CacheKeyOptions): string {
    const parts = {
      scope: `${scope.endpoint ?? scope.database}\u0000${scope.credentials}`,
      text: statement.text,
      rowMode: options.rowMode,
      maxRows: options.maxRows,
    };
    return cacheKey(options.params === undefined ? parts : { ...parts, params: options.params });
  }

  /**
   * The cached entry (one more hit counted), fresh or at most `staleAcceptedMs` past its fresh
   * time; undefined when there is none, or while an invalidation of its place is unconfirmed.
   */
  async lookup(key: string, staleAcceptedMs = 0): Promise<FoundEntry | undefined> {
    const nowMs = this.clock.date().getTime();
    const record = await this.cacheStore.get(key, { nowMs, staleAcceptedMs });
    if (record === undefined || this.awaitsInvalidation(record.scope, record.server)) {
      return undefined;
    }
    const ageMs = nowMs - record.cachedAt.getTime();
    // The store should not have returned it; a store that ignores `freshness` must not serve it.
    if (ageMs > record.freshMs + staleAcceptedMs) return undefined;
    return { record, stale: ageMs > record.freshMs };
  }

  /**
   * A point to pass as `readMark` to `store()`: take it before the statement runs. It holds this
   * instance's own write sequence and the store's mark, so that a local write the store failed
   * to record still refuses older reads.
   */
  async markBeforeRead(scope: CacheScope): Promise<WriteMark> {
    const local = this.writes.mark();
    const stored = await this.cacheStore.mark({ scope: scope.database, server: scope.server });
    return `${local}/${stored}`;
  }

  /**
   * Starts `refresh` for `key` unless this instance already refreshes it: a stale entry served to
   * many requests is read again once (docs/decisions.md 10.27). Failures are the refresh's own.
   */
  refreshOnce(key: string, refresh: () => Promise<void>): void {
    if (this.refreshing.has(key) || this.refreshing.size >= MAX_REFRESHES) return;
    this.refreshing.add(key);
    // Started from a resolved promise, so that even a synchronous throw clears the key.
    void Promise.resolve()
      .then(refresh)
      .catch(() => undefined)
      .finally(() => this.refreshing.delete(key));
  }

  /**
   * Keeps a statement's result, and says whether it did: `stored`, or why not: the statement is
   * not cacheable (or its parameters read the clock), the result is over the byte bound or cannot be measured (`oversize`), or the
   * store refused it, above all because a write to the scope happened since `readMark`.
   */
  async store(args: StoreResultArgs): Promise<StoreVerdict> {
    if (!isCacheableResult(args)) return 'not-cacheable';
    // Cut by the request's byte budget, which other statements of the request shared: another
    // request would have been answered more rows.
    if (args.result.truncatedBy === 'bytes') return 'oversize';
    const { scope } = args;
    if (this.awaitsInvalidation(scope.database, scope.server)) return 'refused';
    let storeMark: WriteMark | undefined;
    if (args.readMark !== undefined) {
      const separator = args.readMark.indexOf('/');
      const local = Number(args.readMark.slice(0, separator));
      if (this.writtenSince(scope, local)) return 'refused';
      storeMark = args.readMark.slice(separator + 1);
    }
    const result: CachedResult = {
      rows: args.result.rows,
      fields: args.result.fields,
      rowCount: args.result.rowCount,
      command: args.result.command,
      truncated: args.result.truncated,
      ...(args.result.truncatedBy ? { truncatedBy: args.result.truncatedBy } : {}),
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
    const kept = await this.cacheStore.set(record, record.freshMs + (args.swrMs ?? 0), storeMark);
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
    const where: InvalidationScope =
      extent === 'server' ? { server: scope.server } : { scope: scope.database };
    // Recorded first: from now on this instance keeps no result of a read marked before it.
    this.writes.recordWrite(placeKey(where));
    // A failure stays pending, retried; other instances may still serve what the write changed
    // until the store confirms (docs/decisions.md 10.27), this one stops serving the place at once.
    return this.unconfirmed.run(where);
  }

  /** Invalidations the store has not confirmed yet. */
  get unconfirmedInvalidations(): number {
    return this.unconfirmed.size;
  }

  private awaitsInvalidation(database: string, server: string): boolean {
    return this.unconfirmed.covers(database, server);
  }

  private writtenSince(scope: CacheScope, mark: number): boolean {
    return (
      this.writes.writtenSince(placeKey({ scope: scope.database }), mark) ||
      this.writes.writtenSince(placeKey({ server: scope.server }), mark)
    );
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

  /** One round trip to a shared store; undefined for a store that always answers. */
  ping(): Promise<void> | undefined {
    return this.cacheStore.ping?.();
  }

  /** Removes every entry (DELETE /api/stats/cache). */
  async clear(): Promise<void> {
    await this.cacheStore.clear();
  }

  /** Tries the unconfirmed invalidations once more, then releases the store. */
  async close(): Promise<void> {
    this.unconfirmed.stop();
    await this.unconfirmed.retryAll();
    await this.cacheStore.close?.();
  }
}

/**
 * Whether a statement's result may be kept: the statement is cacheable and no parameter handed
 * date/time input a clock word (docs/decisions.md 10.36).
 */
export function isCacheableResult(
  read: Pick<StoreResultArgs, 'statement' | 'params' | 'result'>,
): boolean {
  return (
    isCacheableStatement(read.statement) &&
    !readsClockThroughParameters(read.statement, read.params, read.result.parameterTypes)
  );
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
