export {
  QueryStatistics,
  ZERO_CACHE_STATS,
  cacheStatsOf,
  zeroTotals,
  type CacheStats,
} from './query-statistics';
