/**
 * The refresh of a stale cache entry (docs/decisions.md 10.27): a statement read again for the
 * cache, apart from any caller.
 */
import type { RequestCacheScope } from '../execution/cache-attempt';
import { ExecutionContext } from '../execution/context';
import { runAlone } from '../execution/strategies/single';
import type { ConnectionTarget } from '../ports/connections';
import type { QueryOptions } from '../request';
import type { ServiceParts } from './service-parts';

/** How long the refresh of a stale entry may take when its request named no `timeoutMs` (10.27). */
const REFRESH_TIMEOUT_MS = 30_000;

/**
 * Reads a statement again for the cache. It has the request's options (its time limit too), and
 * nobody's signal: the caller it was served to already has the stale answer.
 */
export function refresherFor(
  parts: ServiceParts,
  target: ConnectionTarget,
  requestOptions: QueryOptions,
): RequestCacheScope['refresh'] {
  return async (statement, keep) => {
    // A deadline of its own, so that a refresh the server never answers cannot hold a pooled
    // connection, or the key's only refresh, for ever.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(),
      requestOptions.timeoutMs ?? REFRESH_TIMEOUT_MS,
    );
    const detached = new ExecutionContext({
      provider: parts.connections,
      target,
      options: requestOptions,
      settings: parts.settings,
      clock: parts.clock,
      signal: deadline.signal,
    });
    try {
      await runAlone(detached, (lent) => detached.runStatement(lent, statement), keep);
    } finally {
      clearTimeout(timer);
      detached.heldResult.release();
    }
  };
}
