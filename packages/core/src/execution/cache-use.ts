/**
 * What the result cache did for the statements that never reached it: each result says so
 * (`cacheStatus`, docs/decisions.md 10.27), as each statement event does (10.25).
 */
import type { CacheBypassReason } from '../cache/cache-status';
import type { ParsedStatement } from '../parser';
import type { ExecutionOutcome } from './outcome';

/** What decides, for a statement that never reached the cache, why it did not. */
export interface RequestCacheUse {
  /** There is a cache, and the request asked for it (or the server caches by default). */
  requested: boolean;
  /** Its rows were streamed, or it is a COPY: nothing to keep. */
  streamed: boolean;
}

/** Why a statement that never reached the cache (cache-attempt.ts notes the others) skipped it. */
export function bypassReasonOf(
  statement: ParsedStatement,
  cacheUse: RequestCacheUse | undefined,
): CacheBypassReason {
  if (!cacheUse?.requested) return 'disabled';
  if (cacheUse.streamed) return 'stream';
  if (statement.statementClass !== 'read') return 'write';
  if (statement.callsVolatileFunction || statement.changesSession) return 'volatile';
  return 'transaction';
}

/** Notes `bypass` and its reason on every outcome that the cache did not see. */
export function noteCacheBypasses(
  outcome: ExecutionOutcome | undefined,
  cacheUse: RequestCacheUse | undefined,
): void {
  for (const each of outcome?.outcomes ?? []) {
    each.cache ??= { status: 'bypass', reason: bypassReasonOf(each.statement, cacheUse) };
  }
}
