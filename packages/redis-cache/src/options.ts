export interface RedisCacheOptions {
  /** `redis://[user:pass@]host:port[/db]` (or `rediss://` for TLS). */
  url: string;
  /** Prepended to every key this package writes; several deployments may share one Redis. Default `sqlgate:`. */
  prefix?: string;
  /** Every call to Redis but invalidations settles within this many milliseconds. Default 50. */
  commandTimeoutMs?: number;
  /**
   * An invalidation (after a write) settles within this many milliseconds. Default 1000. Longer
   * than the other calls on purpose: the write is answered once it settles, and answering before
   * the invalidation reached a stalled Redis would let another instance, served first when Redis
   * resumes, read what the write replaced.
   */
  invalidationTimeoutMs?: number;
  /** How often counted statements are sent to Redis, in milliseconds. Default 100. */
  counterFlushMs?: number;
  /**
   * Entries whose encoded form is larger than this many bytes are not kept (`set` resolves false).
   * Default 1 MiB: Redis runs one command at a time, and storing or serving a large entry holds
   * every instance's calls for as long as it takes.
   */
  maxEntryBytes?: number;
}

/** The options with every default filled in, checked. */
export interface ResolvedOptions {
  url: string;
  prefix: string;
  commandTimeoutMs: number;
  invalidationTimeoutMs: number;
  counterFlushMs: number;
  maxEntryBytes: number;
}

export const DEFAULT_PREFIX = 'sqlgate:';
export const DEFAULT_COMMAND_TIMEOUT_MS = 50;
export const DEFAULT_INVALIDATION_TIMEOUT_MS = 1000;
export const DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024;
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
    invalidationTimeoutMs: positive(
      options.invalidationTimeoutMs ?? DEFAULT_INVALIDATION_TIMEOUT_MS,
      'invalidationTimeoutMs',
    ),
    counterFlushMs: positive(options.counterFlushMs ?? DEFAULT_COUNTER_FLUSH_MS, 'counterFlushMs'),
    maxEntryBytes: positive(options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES, 'maxEntryBytes'),
  };
}
