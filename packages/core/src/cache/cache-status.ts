/**
 * What the result cache did for one statement (docs/decisions.md 10.25, 10.27): served it (`hit`,
 * also when it waited for an identical read already running), served an entry past its fresh time
 * while a refresh runs (`stale`), looked it up in vain and ran it (`miss`), or left it alone
 * (`bypass`) for a reason.
 */

/**
 * Why a statement did not use the cache: the request did not ask for it or there is no cache
 * (`disabled`), its rows were streamed (`stream`), it writes (`write`), it is a read of a request
 * that also writes or changes the session (`transaction`), it calls a volatile function or changes
 * the session itself (`volatile`), its result was over the byte bound (`oversize`), or the cache
 * or the database's identity could not be had (`unavailable`).
 */
export type CacheBypassReason =
  'disabled' | 'stream' | 'write' | 'transaction' | 'volatile' | 'oversize' | 'unavailable';

export type CacheStatus =
  | { status: 'hit' }
  | { status: 'stale' }
  | { status: 'miss' }
  | { status: 'bypass'; reason: CacheBypassReason };
