export {
  createMemoryLimitStore,
  DEFAULT_LIMIT_MAX_KEYS,
  type MemoryLimitStore,
  type MemoryLimitStoreOptions,
} from './memory-limit-store';
export {
  CONCURRENCY_RETRY_AFTER_MS,
  requireConcurrencyCap,
  requireRateRule,
  retryAfterSeconds,
} from './rules';
