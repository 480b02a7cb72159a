/**
 * The result cache in Redis, shared by every instance that uses the same Redis and prefix.
 *
 * Coherence with writes rests on generations: each database and each server has a counter that
 * every invalidation of it increments, in the same script that deletes its entries. A mark is
 * `epoch:databaseGeneration:serverGeneration`; `set` keeps an entry only while the current point
 * equals its mark, and each entry remembers the point it was kept at, which `get` checks again.
 * The epoch is a random id created once: a Redis that restarted empty starts its generations at 0
 * again, and the new epoch keeps an older mark from matching them by chance.
 */
import { randomBytes } from 'node:crypto';
import {
  decodeCacheRecord,
  encodeCacheRecord,
  type CacheEntryRecord,
  type CacheEntrySummary,
  type CacheStore,
  type CacheUsage,
  type EntryPlace,
  type Freshness,
  type InvalidationScope,
  type WriteMark,
} from '@sqlgate/core';
import { entriesAndIndexesPattern, placeHash } from './key-layout';
import type { RedisConnection } from './redis-connection';

export interface RedisCacheStoreOptions {
  prefix: string;
  maxEntryBytes: number;
}

/** The store's connections to Redis: one for invalidations, which wait longer, and one for the rest. */
export interface StoreConnections {
  calls: RedisConnection;
  invalidations: RedisConnection;
}

/** Entries one invalidation script drops at most, so that it never holds Redis for long. */
const INVALIDATION_BATCH = 500;
/** Place hashes remembered at once. */
const MAX_REMEMBERED_PLACES = 1000;
/** The least time a health check's PING is given, connecting included (docs/decisions.md 10.40). */
const HEALTH_PING_BOUND_MS = 1000;

export class RedisCacheStore implements CacheStore {
  /** Hashes of the places seen, so that a miss does not hash its place for each call. */
  private readonly hashes = new Map<string, string>();

  constructor(
    private readonly connections: StoreConnections,
    private readonly options: RedisCacheStoreOptions,
    /** Closes the whole RedisCache: the store shares its client with the counters. */
    private readonly closeAll: () => Promise<void>,
  ) {}

  /**
   * The entry with one more hit counted in Redis; undefined when absent, expired, invalidated or
   * older than `freshness` accepts (then no hit is counted).
   */
  async get(key: string, freshness?: Freshness): Promise<CacheEntryRecord | undefined> {
    const reply = (await this.script('sqlgateGet', [
      key,
      freshness ? finiteOrZero(freshness.nowMs) : '',
      freshness ? finiteOrZero(freshness.staleAcceptedMs) : 0,
    ])) as [string, number] | null;
    if (reply === null) return undefined;
    return decodedWithHits(reply[0], reply[1]);
  }

  async mark(place: EntryPlace): Promise<WriteMark> {
    const mark = await this.script('sqlgateMark', [
      this.hashOf(place.scope),
      this.hashOf(place.server),
      newEpoch(),
    ]);
    return String(mark);
  }

  /**
   * Keeps `entry` unless an invalidation of its database or server ran since `mark`. A TTL that is not positive, or an entry whose encoded form is over
   * `maxEntryBytes`, removes the older entry under the key instead.
   */
  async set(entry: CacheEntryRecord, ttlMs: number, mark?: WriteMark): Promise<boolean> {
    const databaseHash = this.hashOf(entry.scope);
    const serverHash = this.hashOf(entry.server);

    let ttl = ttlMs > 0 ? Math.ceil(ttlMs) : 0;
    let text = '';
    if (ttl > 0) {
      text = encodeCacheRecord(entry);
      if (Buffer.byteLength(text) > this.options.maxEntryBytes) {
        ttl = 0;
        text = '';
      }
    }
    const kept = await this.script('sqlgateSet', [
      entry.key,
      databaseHash,
      serverHash,
      mark ?? '',
      ttl,
      text,
      wholeOrZero(entry.hits),
      wholeOrZero(entry.sizeBytes),
      finiteOrZero(entry.cachedAt.getTime()),
      newEpoch(),
      finiteOrZero(entry.freshMs),
      ttl > 0 ? encodeSummary(entry) : '',
    ]);
    return kept === 1;
  }

  /**
   * Removes every entry of the database (or of every database of the server) and advances its
   * generation, atomically. `relations` is not used: the whole place is invalidated, which is
   * correct, only less precise. When Redis cannot be reached, the invalidation rejects within the
   * bound; the result cache (core) keeps it pending and retries it.
   */
  async invalidate(where: InvalidationScope, _relations: string[] | null): Promise<number> {
    const [script, hash] =
      'server' in where
        ? (['sqlgateInvalidateServer', this.hashOf(where.server)] as const)
        : (['sqlgateInvalidateDatabase', this.hashOf(where.scope)] as const);
    const run = (advance: '1' | '0') =>
      this.connections.invalidations.script(script, [
        this.options.prefix,
        hash,
        advance,
        INVALIDATION_BATCH,
      ]) as Promise<[number, number]>;
    // The first call advances the generation: from then on nothing it covers is served or kept.
    let [removed, left] = await run('1');
    // The rest only drops what is already refused, a batch at a time so that Redis serves other
    // clients between batches. A batch that fails leaves entries that expire by their TTL.
    try {
      while (Number(left) === 1) {
        const [more, stillLeft] = await run('0');
        removed += Number(more);
        left = stillLeft;
      }
    } catch {
      // The invalidation itself happened with the first call.
    }
    return Number(removed);
  }

  /**
   * Removes every entry and index under the prefix, never the generations or the epoch: a mark
   * taken before `clear` must still be refused after a later invalidation. SCAN and UNLINK in
   * batches, each within the bound, so a large cache is cleared without blocking Redis.
   */
  async clear(): Promise<void> {
    await this.script('sqlgateDropFixedIndexes', []);
    let cursor = '0';
    do {
      const [next, keys] = await this.connections.calls.run((client) =>
        client.scan(cursor, 'MATCH', entriesAndIndexesPattern(this.options.prefix), 'COUNT', 1000),
      );
      if (keys.length > 0) await this.connections.calls.run((client) => client.unlink(...keys));
      cursor = next;
    } while (cursor !== '0');
  }

  async size(): Promise<number> {
    return (await this.usage()).entries;
  }

  /** Live entries across instances and the sum of their `sizeBytes`; Redis evicts nothing for room here. */
  async usage(): Promise<CacheUsage> {
    const [entries, bytes] = (await this.script('sqlgateUsage', [])) as [number, number];
    return { entries: Number(entries), bytes: Number(bytes), evictions: 0 };
  }

  /** Up to `limit` live entries of every instance, most recently cached first. */
  async recent(limit: number): Promise<CacheEntrySummary[]> {
    if (!(limit > 0)) return [];
    const reply = (await this.script('sqlgateRecent', [Math.floor(limit)])) as (string | number)[];
    const summaries: CacheEntrySummary[] = [];
    for (let index = 0; index + 1 < reply.length; index += 2) {
      const summary = decodedSummary(String(reply[index]), Number(reply[index + 1]));
      if (summary) summaries.push(summary);
    }
    return summaries;
  }

  private hashOf(place: string): string {
    let hash = this.hashes.get(place);
    if (hash === undefined) {
      hash = placeHash(place);
      // Few places are reached; a flood of new ones only costs the memo.
      if (this.hashes.size >= MAX_REMEMBERED_PLACES) this.hashes.clear();
      this.hashes.set(place, hash);
    }
    return hash;
  }

  /**
   * One PING within the command timeout or HEALTH_PING_BOUND_MS, whichever is longer; rejects
   * (RedisCacheUnavailableError) when none comes. The command timeout keeps requests fast; a health
   * check held to it would call a Redis down that is only slow to connect on a busy machine.
   */
  async ping(): Promise<void> {
    const bound = Math.max(this.connections.calls.timeoutMs, HEALTH_PING_BOUND_MS);
    await this.connections.calls.run((client) => client.ping(), bound);
  }

  /** Closes the RedisCache this store belongs to (its counters too: they share one client). */
  close(): Promise<void> {
    return this.closeAll();
  }

  private script(name: Parameters<RedisConnection['script']>[0], args: (string | number)[]) {
    return this.connections.calls.script(name, [this.options.prefix, ...args]);
  }
}

/** The record stored as `text`, with the hits Redis counted; undefined if it cannot be decoded. */
/** What `recent` lists of an entry, kept beside it so that listing never fetches the rows. */
function encodeSummary(entry: CacheEntryRecord): string {
  return JSON.stringify([entry.key, entry.query, entry.executionTime, entry.cachedAt.getTime()]);
}

function decodedSummary(text: string, hits: number): CacheEntrySummary | undefined {
  try {
    const [key, query, executionTime, cachedAtMs] = JSON.parse(text) as [
      string,
      string,
      number,
      number,
    ];
    return { key, query, executionTime, cachedAt: new Date(cachedAtMs), hits: Number(hits) };
  } catch {
    // Written by another version, or damaged: left out of the list, like an entry gone.
    return undefined;
  }
}

function decodedWithHits(text: string, hits: number): CacheEntryRecord | undefined {
  try {
    const record = decodeCacheRecord(text);
    record.hits = Number(hits);
    return record;
  } catch {
    // Written by another format version, or damaged: a miss, replaced by the next set.
    return undefined;
  }
}

function wholeOrZero(value: number): number {
  return Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

function finiteOrZero(value: number): number {
  return Number.isFinite(value) ? value : 0;
}

/**
 * A random epoch, offered to Redis in case it has none (SET NX keeps the first). A new one on
 * every call: an epoch this store offered before may be the one a Redis restarted empty lost, and
 * offering it again would let marks taken before the restart match.
 */
function newEpoch(): string {
  return randomBytes(12).toString('hex');
}
