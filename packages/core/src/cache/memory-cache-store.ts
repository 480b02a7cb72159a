import { LRUCache } from 'lru-cache';
import type { Clock } from '../ports/clock';
import type {
  CacheEntryRecord,
  CacheStore,
  CacheUsage,
  EntryPlace,
  Freshness,
  InvalidationScope,
  WriteMark,
} from '../ports/cache-store';
import { DEFAULT_CACHE_MAX_BYTES, DEFAULT_CACHE_MAX_ENTRIES } from './limits';
import { readsAnyWritten } from './relation-names';
import { ScopeWriteLog } from './scope-write-log';

export interface MemoryCacheStoreOptions {
  /** Most entries kept; the least recently used is evicted first. Default 1000. */
  maxEntries?: number;
  /** Most bytes kept, summing each entry's `sizeBytes`; an entry larger than this is not kept. Default 64 MiB. */
  maxBytes?: number;
  /** Monotonic time for expiry; injectable so tests can move time forward. Default `performance.now()`. */
  clock?: Pick<Clock, 'now'>;
}

function requirePositiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/**
 * The default `CacheStore`: one process's memory, bounded by entries and bytes, LRU. It starts no
 * timer: expired entries go when next touched or pushed out.
 */
export class MemoryCacheStore implements CacheStore {
  private readonly lru: LRUCache<string, CacheEntryRecord>;
  /**
   * Keys in the order they were cached, oldest first. lru-cache orders by last USE, but the
   * statistics list the most recently CACHED entries, so that order is kept here.
   */
  private readonly cachedOrder = new Set<string>();
  /**
   * Set while `size()` sweeps expired entries: lru-cache reads the clock once per entry, and one
   * reading for the whole sweep makes it about three times faster with 1000 entries.
   */
  private sweepTime: number | undefined;
  /** Entries lru-cache removed for room (its `evict` disposals). */
  private evictions = 0;
  /** When each database and server was last invalidated, so that `set` can refuse older reads. */
  private readonly writes = new ScopeWriteLog();

  constructor(options: MemoryCacheStoreOptions = {}) {
    const clock = options.clock ?? performance;
    // lru-cache reads a start time of 0 as "no TTL"; measuring from construction plus 1 ms keeps
    // every start positive whatever the clock's origin.
    const origin = clock.now() - 1;
    this.lru = new LRUCache<string, CacheEntryRecord>({
      max: requirePositiveInteger(options.maxEntries ?? DEFAULT_CACHE_MAX_ENTRIES, 'maxEntries'),
      maxSize: requirePositiveInteger(options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES, 'maxBytes'),
      // lru-cache needs sizes of at least 1; an entry's size is its JSON length.
      sizeCalculation: (record) => Math.max(1, record.sizeBytes),
      // No purge timers (ttlAutopurge) and no clock-debounce timers (ttlResolution > 0 starts one
      // per clock read): expiry is checked on access against the clock itself.
      ttlAutopurge: false,
      ttlResolution: 0,
      // Age counts from caching, not from the last hit: a popular entry still expires on time.
      updateAgeOnGet: false,
      allowStale: false,
      perf: { now: () => this.sweepTime ?? clock.now() - origin },
      // Every way an entry leaves (evicted, expired, replaced, deleted, cleared) passes through here.
      dispose: (_record, key, reason) => {
        this.cachedOrder.delete(key);
        if (reason === 'evict') this.evictions += 1;
      },
    });
  }

  /** The entry with one more hit counted, or undefined when absent or expired. A copy: the caller cannot alter the store. */
  async get(key: string, freshness?: Freshness): Promise<CacheEntryRecord | undefined> {
    // peek first: an entry too old for this caller is not a use, and must not move up the LRU.
    const peeked = this.lru.peek(key);
    if (peeked === undefined || (freshness && !servable(peeked, freshness))) return undefined;
    const record = this.lru.get(key);
    if (record === undefined) return undefined;
    record.hits += 1;
    return { ...record };
  }

  /**
   * The sequence of invalidations so far, one for every place: marks then differ more often, which
   * only makes identical misses share a read less often.
   */
  async mark(_place: EntryPlace): Promise<WriteMark> {
    return String(this.writes.mark());
  }

  /**
   * Keeps `entry` for `ttlMs` as the newest, unless its place was invalidated after `mark`. One
   * over the byte bound, or a TTL not positive, removes any older entry under the key instead.
   */
  async set(entry: CacheEntryRecord, ttlMs: number, mark?: WriteMark): Promise<boolean> {
    if (mark !== undefined && this.invalidatedSince(entry, Number(mark))) return false;
    if (!(ttlMs > 0)) {
      this.lru.delete(entry.key);
      return false;
    }
    // A copy, so counting hits never writes into the caller's object.
    this.lru.set(entry.key, { ...entry }, { ttl: Math.ceil(ttlMs) });
    // Re-adding moves a replaced key to the newest end (its dispose removed it); lru-cache refuses
    // an oversized entry, so only keys it holds are recorded.
    if (!this.lru.has(entry.key)) return false;
    this.cachedOrder.add(entry.key);
    return true;
  }

  private invalidatedSince(place: EntryPlace, mark: number): boolean {
    return (
      this.writes.writtenSince(databaseKey(place.scope), mark) ||
      this.writes.writtenSince(serverKey(place.server), mark)
    );
  }

  async invalidate(where: InvalidationScope, relations: string[] | null): Promise<number> {
    // Recorded before any entry goes, so a read finishing meanwhile is refused by `set`.
    this.writes.recordWrite('server' in where ? serverKey(where.server) : databaseKey(where.scope));
    const doomed: string[] = [];
    for (const [key, record] of this.lru.entries()) {
      const covered =
        'server' in where ? record.server === where.server : record.scope === where.scope;
      if (!covered) continue;
      // Unknown on either side: the write may have touched what the entry read.
      if (relations === null || record.reads === null || readsAnyWritten(record.reads, relations)) {
        doomed.push(key);
      }
    }
    // Deleted after the walk: deleting while lru-cache iterates its list would skip entries.
    for (const key of doomed) this.lru.delete(key);
    return doomed.length;
  }

  async clear(): Promise<void> {
    this.lru.clear();
    this.cachedOrder.clear();
  }

  /** Live entries: expired ones are dropped first, since lru-cache counts them until touched. */
  async size(): Promise<number> {
    this.sweepTime = this.lru.perf.now();
    try {
      this.lru.purgeStale();
    } finally {
      this.sweepTime = undefined;
    }
    return this.lru.size;
  }

  async usage(): Promise<CacheUsage> {
    const entries = await this.size();
    return { entries, bytes: this.lru.calculatedSize, evictions: this.evictions };
  }

  /** Up to `limit` live entries, most recently cached first. Copies. */
  async recent(limit: number): Promise<CacheEntryRecord[]> {
    const newest: CacheEntryRecord[] = [];
    if (!(limit > 0)) return newest;
    const keys = Array.from(this.cachedOrder);
    for (let index = keys.length - 1; index >= 0 && newest.length < limit; index -= 1) {
      // peek: reading the statistics is not a use, so it must not change the LRU order.
      const record = this.lru.peek(keys[index] as string);
      if (record !== undefined) newest.push({ ...record });
    }
    return newest;
  }

  async close(): Promise<void> {
    await this.clear();
  }
}

/** Write-log keys: a database's and a server's invalidations are recorded apart. */
function databaseKey(scope: string): string {
  return `database\u0000${scope}`;
}

function serverKey(server: string): string {
  return `server\u0000${server}`;
}

/** Whether `record` is young enough for a lookup with `freshness`. */
function servable(record: CacheEntryRecord, freshness: Freshness): boolean {
  return freshness.nowMs - record.cachedAt.getTime() <= record.freshMs + freshness.staleAcceptedMs;
}
