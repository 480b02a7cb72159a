import { DEFAULT_CACHE_MAX_BYTES } from '@sqlgate/core';

export interface RedisCacheOptions {
  /** `redis://[user:pass@]host:port[/db]` (or `rediss://` for TLS). */
  url: string;
  /** Prepended to every key this package writes; several deployments may share one Redis. Default `sqlgate:`. */
  prefix?: string;
  /** Every call to Redis settles (resolves or rejects) within this many milliseconds. Default 50. */
  commandTimeoutMs?: number;
  /** How often counted statements are sent to Redis, in milliseconds. Default 100. */
  counterFlushMs?: number;
  /**
   * Entries whose encoded form is larger than this many bytes are not kept (`set` resolves false).
   * Default 64 MiB, the in-memory store's byte bound. An entry must reach Redis within
   * `commandTimeoutMs`, so with the default timeout, entries of more than a few MiB are refused by
   * the deadline anyway on most networks.
   */
  maxEntryBytes?: number;
}

/** The options with every default filled in, checked. */
export interface ResolvedOptions {
  url: string;
  prefix: string;
  commandTimeoutMs: number;
  counterFlushMs: number;
  maxEntryBytes: number;
}

export const DEFAULT_PREFIX = 'sqlgate:';
export const DEFAULT_COMMAND_TIMEOUT_MS = 50;
export const DEFAULT_COUNTER_FLUSH_MS = 100;

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive number of milliseconds or bytes`);
  }
  return value;
}

export function resolveOptions(options: RedisCacheOptions): ResolvedOptions {
  if (typeof options?.url !== 'string' || !/^rediss?:\/\//.test(options.url)) {
    throw new TypeError('url must be a redis:// or rediss:// URL');
  }
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
  return {
    url: options.url,
    prefix,
    commandTimeoutMs: positive(
      options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      'commandTimeoutMs',
    ),
    counterFlushMs: positive(options.counterFlushMs ?? DEFAULT_COUNTER_FLUSH_MS, 'counterFlushMs'),
    maxEntryBytes: positive(options.maxEntryBytes ?? DEFAULT_CACHE_MAX_BYTES, 'maxEntryBytes'),
  };
}
