/**
 * The result cache as one request sees it: serve a read from the cache when the request allows it,
 * else keep what the read produced. A failing store never fails the query: it counts as a miss.
 */
import type { ResultCache } from '../cache';
import type { CacheBypassReason } from '../cache/cache-status';
import { isCacheableStatement } from '../cache/cacheability';
import type { ParsedStatement } from '../parser/types';
import type { Clock } from '../ports/clock';
import type { CacheScope } from '../ports/connections';
import type { Settled } from '../ports/settled';
import type { QueryOptions } from '../request';
import type { StatementOutcome } from './outcome';

export interface CacheAttempt {
  /** The cached result, when there is one. */
  hit?: StatementOutcome;
  /** Keeps a fresh outcome (successful ones only), and notes on it what the cache did. */
  keep(outcome: StatementOutcome): Promise<void>;
}

const NO_CACHE: CacheAttempt = { keep: async () => undefined };

/** The cache was not used for `reason`: the outcome says so. */
function bypassed(reason: CacheBypassReason): CacheAttempt {
  return {
    keep: async (outcome) => {
      outcome.cache = { status: 'bypass', reason };
    },
  };
}

export interface RequestCacheScope {
  cache: ResultCache;
  /**
   * The database and credentials the request reaches; resolving it may need DNS, so it is asked
   * for only when a statement may use the cache (memoised by the caller). Undefined when the
   * database cannot be identified (its name did not resolve).
   */
  scope: () => Promise<CacheScope | undefined>;
  options: QueryOptions;
  maxRows: number;
  clock: Clock;
}

/**
 * The request's cache scope, asked of the provider at most once and only when first needed: most
 * requests never use the cache, and the scope may cost a DNS lookup.
 */
export function lazyCacheScope(
  resolve: () => Promise<Settled<CacheScope>>,
): () => Promise<CacheScope | undefined> {
  let scope: Promise<CacheScope | undefined> | undefined;
  return () => (scope ??= resolve().then((settled) => (settled.ok ? settled.value : undefined)));
}

export async function attemptCache(
  request: RequestCacheScope | undefined,
  statement: ParsedStatement,
): Promise<CacheAttempt> {
  // Without a cache scope the service decides why (report-to-observer.ts, bypassReasonOf).
  if (!request) return NO_CACHE;
  if (!request.cache.isCacheRequested(request.options)) return bypassed('disabled');
  if (!isCacheableStatement(statement)) {
    return bypassed(statement.statementClass === 'read' ? 'volatile' : 'write');
  }
  const { cache, options, clock } = request;
  const scope = await request.scope();
  // The database cannot be identified (its name did not resolve): neither serve nor keep.
  if (!scope) return bypassed('unavailable');
  const key = cache.keyFor(scope, statement, {
    rowMode: options.rowMode,
    maxRows: request.maxRows,
    ...(options.params ? { params: options.params } : {}),
  });
  const started = clock.now();
  let storeFailed = false;
  const entry = await cache.lookup(key).catch(() => {
    storeFailed = true;
    return undefined;
  });
  if (storeFailed) return bypassed('unavailable');
  if (entry) {
    const executionTime = Math.round((clock.now() - started) * 1000) / 1000;
    const result = { ...entry.result, fields: entry.result.fields as never };
    return {
      hit: { ok: true, statement, result, executionTime, cached: true, cache: { status: 'hit' } },
      keep: NO_CACHE.keep,
    };
  }
  // Taken before the read runs: a write that overtakes it keeps its stale result out of the cache.
  const readMark = cache.markBeforeRead();
  const ttl =
    typeof options.cache === 'object' && options.cache.ttlMs !== undefined
      ? { ttlMs: options.cache.ttlMs }
      : {};
  return {
    keep: async (outcome) => {
      outcome.cache = { status: 'miss' };
      if (!outcome.ok) return;
      const verdict = await cache
        .store({
          key,
          scope,
          statement,
          result: outcome.result,
          executionTime: outcome.executionTime,
          readMark,
          ...ttl,
        })
        .catch(() => 'failed' as const);
      if (verdict === 'oversize') outcome.cache = { status: 'bypass', reason: 'oversize' };
      if (verdict === 'failed') outcome.cache = { status: 'bypass', reason: 'unavailable' };
    },
  };
}
