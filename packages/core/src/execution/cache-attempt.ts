/**
 * The result cache as one request sees it: serve a read from the cache when the request allows it,
 * else keep what the read produced. A failing store never fails the query: it counts as a miss.
 */
import type { ResultCache } from '../cache';
import type { ParsedStatement } from '../parser/types';
import type { Clock } from '../ports/clock';
import type { QueryOptions } from '../request';
import type { StatementOutcome } from './outcome';

export interface CacheAttempt {
  /** The cached result, when there is one. */
  hit?: StatementOutcome;
  /** Keeps a fresh outcome (successful ones only). */
  keep(outcome: StatementOutcome): Promise<void>;
}

const NO_CACHE: CacheAttempt = { keep: async () => undefined };

export interface RequestCacheScope {
  cache: ResultCache;
  /** Credential-scoped target key. */
  scope: string;
  options: QueryOptions;
  maxRows: number;
  clock: Clock;
}

export async function attemptCache(
  request: RequestCacheScope | undefined,
  statement: ParsedStatement,
): Promise<CacheAttempt> {
  if (!request || !request.cache.isCacheable(statement, request.options)) return NO_CACHE;
  const { cache, scope, options, clock } = request;
  const key = cache.keyFor(scope, statement, {
    rowMode: options.rowMode,
    maxRows: request.maxRows,
    ...(options.params ? { params: options.params } : {}),
  });
  const started = clock.now();
  const entry = await cache.lookup(key).catch(() => undefined);
  if (entry) {
    const executionTime = Math.round((clock.now() - started) * 1000) / 1000;
    const result = { ...entry.result, fields: entry.result.fields as never };
    return {
      hit: { ok: true, statement, result, executionTime, cached: true },
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
      if (!outcome.ok) return;
      await cache
        .store({
          key,
          scope,
          statement,
          result: outcome.result,
          executionTime: outcome.executionTime,
          readMark,
          ...ttl,
        })
        .catch(() => undefined);
    },
  };
}
