export { ResultCache, type ResultCacheOptions } from './result-cache';
export { MemoryCacheStore, type MemoryCacheStoreOptions } from './memory-cache-store';
export { decodeCacheRecord, encodeCacheRecord } from './cached-result-codec';
export type { CacheEntry } from './cache-entry';
export { isCacheableStatement, isCacheRequested, requestMayUseCache } from './cacheability';
export { widerExtent, writeExtentOf, type WriteExtent } from './write-extent';
export { DEFAULT_CACHE_MAX_BYTES, DEFAULT_CACHE_MAX_ENTRIES, DEFAULT_CACHE_TTL_MS } from './limits';
export type { CacheBypassReason, CacheStatus } from './cache-status';
export {
  UNCONFIRMED_INVALIDATION_WARNING,
  UNSCOPED_INVALIDATION_WARNING,
} from './pending-invalidations';
