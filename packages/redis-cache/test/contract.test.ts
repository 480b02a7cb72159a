/**
 * The Redis store passes the cache store contract of core (packages/core/test/contract), as the
 * in-memory store does, on a throwaway Redis of its own. Each test gets a prefix of its own.
 */
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import { describeCacheStoreContract } from '../../core/test/contract/cache-store-contract';
import { createRedisCache } from '../src';

let redis: LocalRedis;
let stores = 0;

beforeAll(async () => {
  redis = await startLocalRedis();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

describeCacheStoreContract(
  'RedisCacheStore',
  () =>
    createRedisCache({ url: redis.url, prefix: `contract-${++stores}:`, commandTimeoutMs: 1000 })
      .store,
  { expirySlackMs: 50 },
);
