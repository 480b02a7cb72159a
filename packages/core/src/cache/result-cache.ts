import type { Clock } from '../ports/clock';
import { systemClock } from '../ports/clock';
import type { CachedResult, CacheEntryRecord, CacheStore, CacheUsage } from '../ports/cache-store';
import type { CacheScope, RowMode, StatementResult } from '../ports/connections';
import type { ParsedStatement } from '../parser/types';
import type { CacheRequest } from '../request';
import { serializeResponse } from '../json/serialize-response';
import { toCacheEntry, type CacheEntry } from './cache-entry';
import { cacheKey } from './cache-key';
import { isCacheableStatement, isCacheRequested } from './cacheability';
import { ScopeWriteLog, type WriteMark } from './scope-write-log';

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
  /** The request's own TTL; absent: the default. */
  ttlMs?: number;
  /**
   * From `markBeforeRead()`, taken before the statement ran. When given, a result that a write to
   * the same database (or server) may have overtaken is not stored: the write's invalidation has
   * already run, so nothing else would remove it.
   */
  readMark?: WriteMark;
}

/** What became of a result offered to the cache. */
export type StoreVerdict = 'stored' | 'not-cacheable' | 'oversize' | 'overtaken';

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
  private readonly writes = new ScopeWriteLog();

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

  /** The cached entry (one more hit counted), or undefined. */
  async lookup(key: string): Promise<CacheEntryRecord | undefined> {
    return this.cacheStore.get(key);
  }

  /** A point to pass as `readMark` to `store()`: take it before the statement runs. */
  markBeforeRead(): WriteMark {
    return this.writes.mark();
  }

  /**
   * Keeps a statement's result, and says whether it did: `stored`, or why not: the statement is
   * not cacheable, the result is over the byte bound or cannot be measured (`oversize`), or a
   * write to the scope happened since `readMark` (`overtaken`).
   */
  async store(args: StoreResultArgs): Promise<StoreVerdict> {
    if (!isCacheableStatement(args.statement)) return 'not-cacheable';
    if (args.readMark !== undefined && this.writtenSince(args.scope, args.readMark)) {
      return 'overtaken';
    }
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
      hits: 0,
    };
    await this.cacheStore.set(record, args.ttlMs ?? this.defaultTtlMs);
    return 'stored';
  }

  /**
   * After a write through the service: removes every entry of the written database, for every
   * user, or of every database of its server when `extent` is `server` (docs/decisions.md 10.20).
   * Finer invalidation by the relations written is not attempted: triggers, rules, foreign-key
   * cascades and views make a write reach relations its text does not name, and only the catalog
   * could prove otherwise. Resolves to the number removed.
   */
  async invalidate(scope: CacheScope, extent: 'database' | 'server'): Promise<number> {
    // Recorded before the store is touched, so a read finishing meanwhile is refused by `store()`.
    if (extent === 'server') {
      this.writes.recordWrite(serverKey(scope));
      return this.cacheStore.invalidate({ server: scope.server }, null);
    }
    this.writes.recordWrite(databaseKey(scope));
    return this.cacheStore.invalidate({ scope: scope.database }, null);
  }

  private writtenSince(scope: CacheScope, mark: WriteMark): boolean {
    return (
      this.writes.writtenSince(databaseKey(scope), mark) ||
      this.writes.writtenSince(serverKey(scope), mark)
    );
  }

  /** The most recently cached entries, newest first, as GET /api/stats/cache lists them. */
  async recentEntries(limit = 10): Promise<CacheEntry[]> {
    const records = await this.cacheStore.recent(limit);
    return records.map(toCacheEntry);
  }

  /** Live entries. */
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

/** Write-log keys: a database's and a server's writes are recorded apart. */
function databaseKey(scope: CacheScope): string {
  return `database\u0000${scope.database}`;
}

function serverKey(scope: CacheScope): string {
  return `server\u0000${scope.server}`;
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
