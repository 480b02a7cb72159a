import { withLiteralsAsParameters } from '../parser/literals-as-parameters';
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
  /** From `markBeforeRead()`: a result a write may have overtaken is not stored. */
  readMark?: WriteMark;
}

/** What became of a result offered to the cache (`refused`: a write overtook it, or it did not fit). */
export type StoreVerdict = 'stored' | 'not-cacheable' | 'oversize' | 'refused';

/** A cached entry found, and whether it is past its fresh time. */
export interface FoundEntry {
  record: CacheEntryRecord;
  /** Past `freshMs`, within the `swrMs` of the request that looked it up. */
  stale: boolean;
}

/** Which statements may be cached, under which key, kept consistent with writes. */
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
  /** Writes, recorded before the store invalidates: older reads are then not kept or joined. */
  private readonly writes = new ScopeWriteLog();
  /** Invalidations the store did not confirm, retried; their places are neither served nor kept. */
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
   * The key of `statement` on `scope`: it holds the endpoint and credentials, not the host's
   * spelling or sslMode, so every name of one address shares entries (docs/decisions.md 10.20).
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

  /** The entry (a hit counted) at most `staleAcceptedMs` stale; none while invalidation is pending. */
  async lookup(key: string, staleAcceptedMs = 0): Promise<FoundEntry | undefined> {
    const nowMs = this.clock.date().getTime();
    const record = await this.cacheStore.get(key, { nowMs, staleAcceptedMs });
    if (record === undefined || this.unconfirmed.covers(record.scope, record.server)) {
      return undefined;
    }
    const ageMs = nowMs - record.cachedAt.getTime();
    // The store should not have returned it; a store that ignores `freshness` must not serve it.
    if (ageMs > record.freshMs + staleAcceptedMs) return undefined;
    return { record, stale: ageMs > record.freshMs };
  }

  /**
   * `readMark` for `store()`, taken before the statement runs: the local write sequence too, so a
   * local write the store failed to record still refuses older reads.
   */
  async markBeforeRead(scope: CacheScope): Promise<WriteMark> {
    const local = this.writes.mark();
    const stored = await this.cacheStore.mark({ scope: scope.database, server: scope.server });
    return `${local}/${stored}`;
  }

  /** Starts `refresh` for `key` unless already refreshing it (docs/decisions.md 10.27). */
  refreshOnce(key: string, refresh: () => Promise<void>): void {
    if (this.refreshing.has(key) || this.refreshing.size >= MAX_REFRESHES) return;
    this.refreshing.add(key);
    // Started from a resolved promise, so that even a synchronous throw clears the key.
    void Promise.resolve()
      .then(refresh)
      .catch(() => undefined)
      .finally(() => this.refreshing.delete(key));
  }

  /** Keeps a statement's result, or says why not. */
  async store(args: StoreResultArgs): Promise<StoreVerdict> {
    if (!isCacheableResult(args)) return 'not-cacheable';
    // Cut by the request's byte budget, which other statements of the request shared: another
    // request would have been answered more rows.
    if (args.result.truncatedBy === 'bytes') return 'oversize';
    const { scope } = args;
    if (this.unconfirmed.covers(scope.database, scope.server)) return 'refused';
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
      // A tenant's literals (a search term, an id) are not another's to read in the statistics.
      query: args.scope.shared
        ? withLiteralsAsParameters(args.statement.text)
        : args.statement.text,
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
   * After a write: removes every entry of the database, or of its server (docs/decisions.md 10.20).
   * Not by relation: triggers, rules, cascades and views reach relations the text does not name.
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

/** Cacheable, and no parameter gave date/time input a clock word (docs/decisions.md 10.36). */
export function isCacheableResult(
  read: Pick<StoreResultArgs, 'statement' | 'params' | 'result'>,
): boolean {
  return (
    isCacheableStatement(read.statement) &&
    !readsClockThroughParameters(read.statement, read.params, read.result.parameterTypes)
  );
}

/** Bytes of the JSON the entry would be served as; undefined when it cannot be serialised. */
function byteLengthOfJson(result: CachedResult): number | undefined {
  try {
    return Buffer.byteLength(serializeResponse(result));
  } catch {
    return undefined;
  }
}
