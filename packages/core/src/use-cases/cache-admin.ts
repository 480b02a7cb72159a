/** The result cache as an operator sees it: counters, recent entries, usage, health, clearing. */
import type { ServiceParts } from '../pipeline/service-parts';
import type { CacheUsage } from '../ports/cache-store';
import type { CacheHealth, CacheStatistics } from '../service-types';
import { cacheStatsOf } from '../stats';

export function cacheAdministration({ cache, counters }: ServiceParts) {
  return {
    cacheStatistics: async (): Promise<CacheStatistics> => {
      const [totals, size, entries] = await Promise.all([
        counters.totals(),
        cache ? cache.size() : 0,
        cache ? cache.recentEntries(10) : [],
      ]);
      return { stats: cacheStatsOf(totals, size), entries };
    },
    clearCache: async (): Promise<void> => {
      await cache?.clear();
    },
    cacheHealth: async (): Promise<CacheHealth> => {
      try {
        await cache?.ping();
        return { available: true };
      } catch (error) {
        return { available: false, reason: error instanceof Error ? error.message : String(error) };
      }
    },
    cacheUsage: async (): Promise<CacheUsage> =>
      (await cache?.usage()) ?? {
        entries: cache ? await cache.size() : 0,
        bytes: 0,
        evictions: 0,
      },
  };
}
