/**
 * The in-memory store passes the cache store contract, which the Redis store passes too
 * (packages/redis-cache/test): what the result cache relies on holds whichever store it is given.
 */
import { MemoryCacheStore } from '../../src/cache';
import { describeCacheStoreContract } from './cache-store-contract';

describeCacheStoreContract('MemoryCacheStore', () => new MemoryCacheStore());
