import type { CacheStore, SharedCounters } from '@sqlgate/core';
import { resolveOptions, type RedisCacheOptions } from './options';
import { RedisCacheStore } from './redis-cache-store';
import { RedisConnection } from './redis-connection';
import { RedisCounters } from './redis-counters';

export interface RedisCache {
  /** The result cache, shared by every instance using the same Redis and prefix. */
  store: CacheStore;
  /** The statistics counters, summed over those instances. */
  counters: SharedCounters;
  /**
   * Sends pending counts once (within the command timeout), then closes the connection. Idempotent; `store.close()` and `counters.close()` do
   * the same, since both share the connection.
   */
  close(): Promise<void>;
}

/**
 * A result cache and statistics counters kept in Redis, for several sqlgate instances to share.
 * Give `store` to `createQueryService` as `cacheStore` and `counters` as `counters`.
 *
 * @example
 * const redis = createRedisCache({ url: 'redis://127.0.0.1:6379' });
 * const service = createQueryService({ connections, cacheStore: redis.store, counters: redis.counters });
 */
export function createRedisCache(options: RedisCacheOptions): RedisCache {
  const resolved = resolveOptions(options);
  const connection = new RedisConnection(resolved.url, resolved.commandTimeoutMs);
  // Invalidations wait longer than the rest (options.ts), on a connection of their own so that
  // no other call's bound changes.
  const invalidations = new RedisConnection(resolved.url, resolved.invalidationTimeoutMs);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await counters.stop();
      await Promise.all([connection.close(), invalidations.close()]);
    })());
  const store = new RedisCacheStore({ calls: connection, invalidations }, resolved, close);
  const counters = new RedisCounters(connection, resolved.prefix, resolved.counterFlushMs, close);
  return { store, counters, close };
}
