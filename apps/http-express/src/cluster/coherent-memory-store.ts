/**
 * A worker's result cache (docs/decisions.md 10.28): its own MemoryCacheStore, kept coherent with
 * every other worker's through the primary, with the promise a shared store gives (10.20): once
 * `invalidate` has resolved, no worker serves an entry it covers, and no read marked before it
 * stores an older result.
 *
 * An invalidation is applied here first, then sent to the primary, which relays it to every other
 * worker; each applies it to its own store (which records it, so that its reads marked earlier
 * are refused) and acknowledges. The primary answers once every worker has acknowledged or is
 * dead (one that does not acknowledge within its bound is killed first), and only then does
 * `invalidate` resolve, so the write's response is sent after that.
 */
import type {
  CacheEntryRecord,
  CacheEntrySummary,
  CacheStore,
  CacheUsage,
  EntryPlace,
  InvalidationScope,
  MemoryCacheStore,
  WriteMark,
} from '@sqlgate/core';
import type { CacheEntryOnTheWire } from './protocol';
import { CONFIRMATION_TIMEOUT_MS, STATISTICS_TIMEOUT_MS, type PrimaryLink } from './worker-channel';

export class CoherentMemoryStore implements CacheStore {
  /**
   * Advanced each time this store forgets everything (a clear, or another worker died without
   * saying what it wrote): a mark of an earlier epoch is refused, as a mark older than an
   * invalidation is, since the forgotten writes are recorded nowhere.
   */
  private epoch = 0;

  constructor(
    private readonly local: MemoryCacheStore,
    private readonly primary: PrimaryLink,
    /** Told when the primary did not confirm in time: other workers may still serve old entries. */
    private readonly unconfirmed: (what: string, error: Error) => void = () => undefined,
  ) {}

  get(key: string): Promise<CacheEntryRecord | undefined> {
    return this.local.get(key);
  }

  async mark(place: EntryPlace): Promise<WriteMark> {
    // The epoch first: a forgetting between the two readings then makes the mark too old (refused),
    // never too new.
    const epoch = this.epoch;
    return `${epoch}:${await this.local.mark(place)}`;
  }

  async set(entry: CacheEntryRecord, ttlMs: number, mark?: WriteMark): Promise<boolean> {
    if (mark === undefined) return this.local.set(entry, ttlMs);
    const separator = mark.indexOf(':');
    if (separator === -1 || mark.slice(0, separator) !== String(this.epoch)) return false;
    return this.local.set(entry, ttlMs, mark.slice(separator + 1));
  }

  async invalidate(where: InvalidationScope, relations: string[] | null): Promise<number> {
    const removed = await this.local.invalidate(where, relations);
    await this.confirmed(
      'invalidation',
      this.primary.request('invalidate', { where, relations }, CONFIRMATION_TIMEOUT_MS),
    );
    return removed;
  }

  /** Clears every worker's cache (DELETE /api/stats/cache). */
  async clear(): Promise<void> {
    await this.forgetAll();
    await this.confirmed('clear', this.primary.request('clearCaches', {}, CONFIRMATION_TIMEOUT_MS));
  }

  /** Live entries of every worker. */
  async size(): Promise<number> {
    return (await this.primary.request('cacheSize', {}, STATISTICS_TIMEOUT_MS)).entries;
  }

  /** The most recently cached entries of every worker, newest first. */
  async recent(limit: number): Promise<CacheEntrySummary[]> {
    const { entries } = await this.primary.request(
      'recentEntries',
      { limit: Math.max(0, Math.floor(limit)) },
      STATISTICS_TIMEOUT_MS,
    );
    return entries.map(({ cachedAtMs, ...summary }) => ({
      ...summary,
      cachedAt: new Date(cachedAtMs),
    }));
  }

  /** This worker's usage: /metrics sums the workers' gauges itself. */
  usage(): Promise<CacheUsage> {
    return this.local.usage();
  }

  close(): Promise<void> {
    return this.local.close();
  }

  /** An invalidation relayed from another worker. */
  applyInvalidation(where: InvalidationScope, relations: string[] | null): Promise<number> {
    return this.local.invalidate(where, relations);
  }

  /** Empties this worker's cache and refuses the results of reads that began before. */
  async forgetAll(): Promise<void> {
    this.epoch += 1;
    await this.local.clear();
  }

  /** This worker's live entries. */
  localSize(): Promise<number> {
    return this.local.size();
  }

  /** This worker's most recently cached entries, as the primary gathers them. */
  async localRecent(limit: number): Promise<CacheEntryOnTheWire[]> {
    return (await this.local.recent(limit)).map((record) => ({
      key: record.key,
      query: record.query,
      executionTime: record.executionTime,
      cachedAtMs: record.cachedAt.getTime(),
      hits: record.hits,
    }));
  }

  private async confirmed(what: string, confirmation: Promise<unknown>): Promise<void> {
    try {
      await confirmation;
    } catch (error) {
      this.unconfirmed(what, error as Error);
      throw error;
    }
  }
}
