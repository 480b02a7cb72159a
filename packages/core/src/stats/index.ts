export {
  QueryStatistics,
  ZERO_CACHE_STATS,
  cacheStatsOf,
  countableMs,
  zeroTotals,
  type CacheStats,
} from './query-statistics';
