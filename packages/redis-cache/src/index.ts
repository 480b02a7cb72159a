/**
 * sqlgate's result cache and statistics counters in Redis, shared by several instances
 * (README.md): the `CacheStore` and `SharedCounters` ports of `@sqlgate/core`.
 */
export { createRedisCache, type RedisCache } from './create-redis-cache';
export type { RedisCacheOptions } from './options';
export { RedisCacheUnavailableError } from './redis-connection';
export {
  connectRedisLimitStore,
  createRedisLimitStore,
  DEFAULT_LEASE_MS,
  DEFAULT_RETRY_REDIS_AFTER_MS,
  type RedisLimitStoreOptions,
} from './redis-limit-store';
