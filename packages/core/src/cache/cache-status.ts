/**
 * What the result cache did for one statement (docs/decisions.md 10.25, 10.27); `hit` also when
 * it waited for an identical read, `stale` while a refresh runs.
 */

/**
 * Why a statement did not use the cache; `transaction`: a read of a request that also writes or
 * changes the session; `unavailable`: the cache or the database's identity could not be had.
 */
export type CacheBypassReason =
  'disabled' | 'stream' | 'write' | 'transaction' | 'volatile' | 'oversize' | 'unavailable';

export type CacheStatus =
  | { status: 'hit' }
  | { status: 'stale' }
  | { status: 'miss' }
  | { status: 'bypass'; reason: CacheBypassReason };
