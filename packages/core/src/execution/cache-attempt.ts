/**
 * The result cache as one request sees it: serve a read from the cache when the request allows it,
 * else keep what the read produced. A failing store never fails the query: it is bypassed
 * (`unavailable`). docs/decisions.md 8, 10.27.
 */
import { isCacheableResult, type ResultCache, type StoreVerdict } from '../cache/result-cache';
import type { CacheBypassReason, CacheStatus } from '../cache/cache-status';
import { isCacheableStatement } from '../cache/cacheability';
import type { LeadFlight } from '../cache/read-flights';
import type { ParsedStatement } from '../parser/types';
import type { CachedResult, WriteMark } from '../ports/cache-store';
import type { Clock } from '../ports/clock';
import type { CacheScope, StatementResult } from '../ports/connections';
import type { Settled } from '../ports/settled';
import type { QueryOptions } from '../request';
import { elapsed } from './context';
import type { StatementOutcome } from './outcome';
import { withFields } from '../with-fields';

export interface CacheAttempt {
  /** The result to answer with, when the cache (or an identical read running) had one. */
  hit?: StatementOutcome;
  /**
   * Keeps a fresh outcome (successful ones only), and notes on it what the cache did. A promise
   * when keeping waits for the store; undefined when it was done at once (no cache, a bypass), so
   * that most statements need not spend a turn of the event loop awaiting it.
   */
  keep(outcome: StatementOutcome): Promise<void> | undefined;
  /**
   * Called once the statement is done with, however it ended: requests waiting for this read stop
   * waiting (they run the statement themselves when it produced nothing to share).
   */
  settle(): void;
}

const NO_CACHE: CacheAttempt = { keep: () => undefined, settle: () => undefined };

/** The cache was not used for `reason`: the outcome says so. One attempt per reason: it holds no state. */
const BYPASSED = new Map<CacheBypassReason, CacheAttempt>();

function bypassed(reason: CacheBypassReason): CacheAttempt {
  let attempt = BYPASSED.get(reason);
  if (attempt === undefined) {
    attempt = {
      keep: (outcome) => {
        outcome.cache = { status: 'bypass', reason };
        return undefined;
      },
      settle: NO_CACHE.settle,
    };
    BYPASSED.set(reason, attempt);
  }
  return attempt;
}

/**
 * The attempt of a statement whose request did not ask for the cache, known without awaiting
 * anything: most requests do not, and each await costs a turn of the event loop.
 */
export function attemptWithoutLookup(
  cache: ResultCache | undefined,
  options: QueryOptions,
): CacheAttempt | undefined {
  if (!cache) return NO_CACHE;
  return cache.isCacheRequested(options) ? undefined : bypassed('disabled');
}

export interface RequestCacheScope {
  cache: ResultCache;
  /**
   * The database and credentials the request reaches; resolving it may need DNS, so it is asked
   * for only when a statement may use the cache (memoised by the caller). Undefined when the
   * database cannot be identified (its name did not resolve).
   */
  scope: () => Promise<CacheScope | undefined>;
  /**
   * Runs `statement` again apart from the request, on a connection of its own, and hands its
   * outcome to `keep` (the refresh of a stale entry). Without it, stale entries are never served.
   */
  refresh?: (
    statement: ParsedStatement,
    keep: (outcome: StatementOutcome) => Promise<void>,
  ) => Promise<void>;
  /** `{value}` of `promise`, or undefined once the request is cancelled or its caller goes away. */
  unlessCancelled: <T>(promise: Promise<T>) => Promise<{ value: T } | undefined>;
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

/** The request's `cache` object: its TTL and stale-while-revalidate window, when it names them. */
function cacheTimes(options: QueryOptions): { ttlMs?: number; swrMs?: number } {
  return typeof options.cache === 'object' ? options.cache : {};
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
  // A stale entry is served only where it can be refreshed.
  const staleAcceptedMs = request.refresh ? (cacheTimes(options).swrMs ?? 0) : 0;
  const entry = await orFailed(cache.lookup(key, staleAcceptedMs));
  if (entry === STORE_FAILED) return bypassed('unavailable');
  if (entry) {
    if (entry.stale) refreshInBackground(request, statement, key, scope, entry.record.cachedAt);
    const status: CacheStatus = entry.stale ? { status: 'stale' } : { status: 'hit' };
    return served(statement, entry.record.result, elapsed(clock, started), status);
  }
  // Taken before the read runs: a write that overtakes it keeps its stale result out of the cache.
  const readMark = await orFailed(cache.markBeforeRead(scope));
  if (readMark === STORE_FAILED) return bypassed('unavailable');
  // Identical options read identically; a request with another time limit reads for itself.
  const flightKey = `${key}\u0000${options.timeoutMs ?? ''}`;
  const running = cache.flights.join(flightKey, readMark);
  if (running) {
    const waited = await request.unlessCancelled(running);
    // Cancelled while waiting: the request stops without reading, and leads nothing.
    if (waited === undefined) return NO_CACHE;
    const shared = waited.value;
    if (shared) return served(statement, shared, elapsed(clock, started), { status: 'hit' });
    // The read it waited for failed: this request reads for itself.
  }
  return keepAfterRead(request, key, scope, readMark, cache.flights.lead(flightKey, readMark));
}

/** The cache served `result`: nothing runs. */
function served(
  statement: ParsedStatement,
  result: CachedResult | StatementResult,
  executionTime: number,
  cache: CacheStatus,
): CacheAttempt {
  const hit: StatementOutcome = {
    ok: true,
    statement,
    result: withFields(result, { fields: result.fields as never }),
    executionTime,
    cached: true,
    cache,
  };
  return { hit, keep: NO_CACHE.keep, settle: NO_CACHE.settle };
}

/** A miss: the request reads, keeps the result, and shares it with identical misses meanwhile. */
function keepAfterRead(
  request: RequestCacheScope,
  key: string,
  scope: CacheScope,
  readMark: WriteMark,
  flight: LeadFlight<StatementResult>,
): CacheAttempt {
  return {
    keep: async (outcome) => {
      outcome.cache = { status: 'miss' };
      if (!outcome.ok) return;
      const { params } = request.options;
      if (!isCacheableResult({ statement: outcome.statement, params, result: outcome.result })) {
        // A parameter handed date/time input a clock word: neither kept nor shared (settle()
        // sends the requests waiting for it to read for themselves).
        outcome.cache = { status: 'bypass', reason: 'volatile' };
        return;
      }
      // Rows cut by this request's own byte budget are not another request's answer. A request
      // that joined before a write may get rows the write overtook: it overlapped the write.
      if (outcome.result.truncatedBy !== 'bytes') flight.land(outcome.result);
      const verdict = await orFailed(storeRead(request, key, scope, readMark, outcome));
      if (verdict === 'oversize') outcome.cache = { status: 'bypass', reason: 'oversize' };
      if (verdict === STORE_FAILED) outcome.cache = { status: 'bypass', reason: 'unavailable' };
    },
    settle: () => flight.land(undefined),
  };
}

/**
 * Reads a stale entry's statement again, once per instance at a time, apart from the request that
 * was served it; its mark is taken before it reads, like any miss's.
 */
function refreshInBackground(
  request: RequestCacheScope,
  statement: ParsedStatement,
  key: string,
  scope: CacheScope,
  cachedAt: Date,
): void {
  const { cache, refresh } = request;
  if (!refresh) return;
  // One refresh per entry: an entry cached anew (after a write) is refreshed even while an older
  // refresh of the key still waits for its deadline.
  cache.refreshOnce(`${key}\u0000${cachedAt.getTime()}`, async () => {
    const readMark = await cache.markBeforeRead(scope);
    await refresh(statement, async (outcome) => {
      if (outcome.ok) await storeRead(request, key, scope, readMark, outcome);
    });
  });
}

/** Offers a successful read to the cache, with the request's TTL and stale window. */
function storeRead(
  request: RequestCacheScope,
  key: string,
  scope: CacheScope,
  readMark: WriteMark,
  outcome: Extract<StatementOutcome, { ok: true }>,
): Promise<StoreVerdict> {
  const { ttlMs, swrMs } = cacheTimes(request.options);
  return request.cache.store({
    key,
    scope,
    statement: outcome.statement,
    ...(request.options.params ? { params: request.options.params } : {}),
    result: outcome.result,
    executionTime: outcome.executionTime,
    readMark,
    ...(ttlMs === undefined ? {} : { ttlMs }),
    ...(swrMs === undefined ? {} : { swrMs }),
  });
}

/** What a store call that rejected resolves to here: the cache is bypassed, the query goes on. */
const STORE_FAILED = Symbol('store failed');

function orFailed<T>(promise: Promise<T>): Promise<T | typeof STORE_FAILED> {
  return promise.catch(() => STORE_FAILED);
}
