import type { Clock } from '../ports/clock';
import { systemClock } from '../ports/clock';
import type { CachedResult, CacheEntryRecord, CacheStore } from '../ports/cache-store';
import type { RowMode, StatementResult } from '../ports/connections';
import type { ParsedStatement } from '../parser/types';
import type { CacheRequest } from '../request';
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
  /** The credential-scoped target the statement ran on. */
  scope: string;
  statement: ParsedStatement;
  result: StatementResult;
  /** Milliseconds the statement took in PostgreSQL. */
  executionTime: number;
  /** The request's own TTL; absent: the default. */
  ttlMs?: number;
  /**
   * From `markBeforeRead()`, taken before the statement ran. When given, a result that a write to
   * the same target may have overtaken is not stored: the write's invalidation has already run,
   * so nothing else would remove it.
   */
  readMark?: WriteMark;
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
    return (
      isCacheRequested(request.cache, this.enabledByDefault) && isCacheableStatement(statement)
    );
  }

  /** The key of `statement` run on `scope` with these options. Same inputs, same key. */
  keyFor(scope: string, statement: ParsedStatement, options: CacheKeyOptions): string {
    const parts = {
      scope,
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
   * Keeps a statement's result. Resolves to false, keeping nothing, when the statement is not
   * cacheable, the result is over the byte bound or cannot be measured, or a write to the scope
   * happened since `readMark`.
   */
  async store(args: StoreResultArgs): Promise<boolean> {
    if (!isCacheableStatement(args.statement)) return false;
    if (args.readMark !== undefined && this.writes.writtenSince(args.scope, args.readMark))
      return false;
    const result: CachedResult = {
      rows: args.result.rows,
      fields: args.result.fields,
      rowCount: args.result.rowCount,
      command: args.result.command,
      truncated: args.result.truncated,
    };
    const sizeBytes = byteLengthOfJson(result);
    if (sizeBytes === undefined || sizeBytes > this.maxEntryBytes) return false;
    const record: CacheEntryRecord = {
      key: args.key,
      scope: args.scope,
      query: args.statement.text,
      reads: args.statement.relations.reads === null ? null : [...args.statement.relations.reads],
      result,
      sizeBytes,
      executionTime: args.executionTime,
      cachedAt: this.clock.date(),
      hits: 0,
    };
    await this.cacheStore.set(record, args.ttlMs ?? this.defaultTtlMs);
    return true;
  }

  /**
   * After a write to `scope`: removes the entries that read any `written` relation, or all the
   * scope's entries when `written` is null (unknown). Resolves to the number removed.
   */
  async invalidate(scope: string, written: string[] | null): Promise<number> {
    // Recorded before the store is touched, so a read finishing meanwhile is refused by `store()`.
    this.writes.recordWrite(scope);
    return this.cacheStore.invalidate(scope, written);
  }

  /** The most recently cached entries, newest first, as GET /api/stats/cache lists them. */
  async recentEntries(limit = 10): Promise<CacheEntry[]> {
    const records = await this.cacheStore.recent(limit);
    return records.map(toCacheEntry);
  }

  /** Live entries. */
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

/** Bytes of the JSON the entry would be served as; undefined when it cannot be serialised. */
function byteLengthOfJson(result: CachedResult): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(result));
  } catch {
    return undefined;
  }
}
