export { QueryStatistics, ZERO_CACHE_STATS, type CacheStats } from './query-statistics';
