/**
 * Statistics of several workers as one server's (docs/decisions.md 10.28). Pure functions, used by
 * the primary on what the workers answered.
 */
import type { PoolStat } from '@sqlgate/core';
import type { CacheEntryOnTheWire } from './protocol';

/**
 * The pools of every worker, one entry per pool id (first seen first). Every PoolStat field is a
 * count of connections or waiting requests, each held by one worker's own pool, so they add up:
 * none is a limit or a high-water mark that would have to be the largest instead.
 */
export function mergePoolStats(perWorker: readonly (readonly PoolStat[])[]): PoolStat[] {
  const byId = new Map<string, PoolStat>();
  for (const pools of perWorker) {
    for (const pool of pools) {
      const merged = byId.get(pool.poolId);
      if (merged === undefined) {
        byId.set(pool.poolId, { ...pool });
        continue;
      }
      merged.totalConnections += pool.totalConnections;
      merged.idleConnections += pool.idleConnections;
      merged.activeConnections += pool.activeConnections;
      merged.waitingClients += pool.waitingClients;
    }
  }
  return Array.from(byId.values());
}

/** The `limit` most recently cached entries of all workers, newest first. */
export function newestEntries(
  perWorker: readonly (readonly CacheEntryOnTheWire[])[],
  limit: number,
): CacheEntryOnTheWire[] {
  return perWorker
    .flat()
    .sort((a, b) => b.cachedAtMs - a.cachedAtMs)
    .slice(0, limit);
}
