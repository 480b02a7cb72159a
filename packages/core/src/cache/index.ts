export {
  ResultCache,
  type CacheKeyOptions,
  type ResultCacheOptions,
  type StoreResultArgs,
  type StoreVerdict,
  type FoundEntry,
} from './result-cache';
export { MemoryCacheStore, type MemoryCacheStoreOptions } from './memory-cache-store';
export { decodeCacheRecord, encodeCacheRecord } from './cached-result-codec';
export { toCacheEntry, type CacheEntry } from './cache-entry';
export { cacheKey, type CacheKeyParts } from './cache-key';
export { isCacheableStatement, isCacheRequested, requestMayUseCache } from './cacheability';
export { widerExtent, writeExtentOf, type WriteExtent } from './write-extent';
export { readsAnyWritten, relationPart } from './relation-names';
export { ScopeWriteLog, type WriteSequence } from './scope-write-log';
export { DEFAULT_CACHE_MAX_BYTES, DEFAULT_CACHE_MAX_ENTRIES, DEFAULT_CACHE_TTL_MS } from './limits';
export type { CacheBypassReason, CacheStatus } from './cache-status';
export { ReadFlights, type LeadFlight } from './read-flights';
export {
  UNCONFIRMED_INVALIDATION_WARNING,
  UNSCOPED_INVALIDATION_WARNING,
} from './pending-invalidations';
