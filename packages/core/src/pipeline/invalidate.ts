/**
 * What a request that may have written does to the result cache: the entries it may have changed
 * are dropped, and the caller hears of a commit only once they are (docs/decisions.md 10.20, 10.27).
 */
import {
  UNCONFIRMED_INVALIDATION_WARNING,
  UNSCOPED_INVALIDATION_WARNING,
  type ResultCache,
  type WriteExtent,
} from '../cache';
import type { CacheScope } from '../ports/connections';
import type { EventChannel } from '../streaming/event-channel';

/** Why a write's answer says the cache may still hold what it changed: its warning and log line. */
export interface InvalidationTrouble {
  warning: string;
  log: string;
  place?: string;
}

/**
 * A streamed request's statement that may have written, or committed writes, has its `end` event
 * held until the cache dropped what the request may have changed (docs/decisions.md 10.27): the
 * caller must not learn of a commit while the cache still serves what it replaced. The request
 * invalidates once more when it ends, for what commits with it.
 */
export function holdStreamedWriteEnds(
  channel: EventChannel,
  cache: ResultCache,
  scope: () => Promise<CacheScope | undefined>,
  extent: WriteExtent,
): void {
  if (extent === 'none') return;
  channel.holdEnds((statement) =>
    statement.statementClass === 'read' && !statement.changesSession
      ? undefined
      : invalidateWritten(cache, scope, extent).then(() => undefined),
  );
}

/**
 * After a request that may have written through the service, drops every cached entry of the
 * database it reached, for every user, or of the whole server when a statement may reach beyond
 * the database (docs/decisions.md 10.20). Decided from the statements sent, not from their
 * outcomes: a rolled-back or failed request invalidates too, which costs only re-execution.
 * Resolves to the database (or server) whose invalidation the store did not confirm, if any: it
 * stays pending (docs/decisions.md 10.27), and the answer says so.
 */
export async function invalidateWritten(
  cache: ResultCache,
  scope: () => Promise<CacheScope | undefined>,
  extent: WriteExtent,
): Promise<InvalidationTrouble | undefined> {
  if (extent === 'none') return undefined;
  // A defect here must not turn the answer about what ran (a committed write) into a failure.
  const reached = await scope().catch(() => undefined);
  if (!reached) {
    return {
      warning: UNSCOPED_INVALIDATION_WARNING,
      log: 'cache invalidation impossible: the database reached is unknown',
    };
  }
  const place = extent === 'server' ? reached.server : reached.database;
  try {
    await cache.invalidate(reached, extent);
    return undefined;
  } catch {
    return {
      warning: UNCONFIRMED_INVALIDATION_WARNING,
      log: 'cache invalidation not confirmed by the store',
      place,
    };
  }
}
