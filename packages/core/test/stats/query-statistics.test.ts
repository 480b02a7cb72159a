import { cacheStatsOf, QueryStatistics, ZERO_CACHE_STATS, type CacheStats } from '../../src/stats';

/**
 * Counts statements as the service does (pipeline/report.ts): one that ran in PostgreSQL,
 * successfully or not, is executed and a miss; one served from the cache is a hit and leaves the
 * mean untouched; one that never reached the database is a miss with no time to average.
 */
class Counting {
  readonly statistics = new QueryStatistics();

  executed(executionMs: number): void {
    this.statistics.add({ hits: 0, misses: 1, executed: 1, executionMs });
  }

  cacheHit(): void {
    this.statistics.add({ hits: 1, misses: 0, executed: 0, executionMs: 0 });
  }

  notExecuted(): void {
    this.statistics.add({ hits: 0, misses: 1, executed: 0, executionMs: 0 });
  }

  async stats(cacheSize = 0): Promise<CacheStats> {
    return cacheStatsOf(await this.statistics.totals(), cacheSize);
  }
}

describe('QueryStatistics', () => {
  it('reports every counter as 0 before any statement', async () => {
    expect(await new Counting().stats()).toEqual(ZERO_CACHE_STATS);
  });

  it('counts hits and every other statement as misses, so hits + misses = total', async () => {
    const counting = new Counting();
    // 3 cacheable misses, 2 hits, 1 uncached write
    counting.executed(10);
    counting.executed(20);
    counting.executed(30);
    counting.cacheHit();
    counting.cacheHit();
    counting.executed(40);

    const stats = await counting.stats(3);

    expect(stats).toEqual({
      totalQueries: 6,
      cacheHits: 2,
      cacheMisses: 4,
      hitRate: 33.33,
      avgExecutionTime: 25,
      cacheSize: 3,
    });
    expect(stats.cacheHits + stats.cacheMisses).toBe(stats.totalQueries);
  });

  it('averages over executed statements only: hits do not pull the mean down', async () => {
    const counting = new Counting();
    counting.executed(3);
    counting.cacheHit();
    counting.cacheHit();

    expect((await counting.stats()).avgExecutionTime).toBe(3);
  });

  it('rounds the mean to 3 decimals and the hit rate to 2', async () => {
    const counting = new Counting();
    counting.executed(1);
    counting.executed(1);
    counting.executed(2.0001);
    counting.cacheHit();
    counting.cacheHit();

    const stats = await counting.stats();

    expect(stats.avgExecutionTime).toBe(1.333);
    expect(stats.hitRate).toBe(40);
  });

  it('keeps the hit rate between 0 and 100', async () => {
    const onlyHits = new Counting();
    onlyHits.cacheHit();
    const onlyMisses = new Counting();
    onlyMisses.executed(1);

    expect((await onlyHits.stats()).hitRate).toBe(100);
    expect((await onlyHits.stats()).avgExecutionTime).toBe(0);
    expect((await onlyMisses.stats()).hitRate).toBe(0);
  });

  it('counts a statement that never ran as a miss without touching the mean', async () => {
    const counting = new Counting();
    counting.executed(8);
    counting.notExecuted();

    expect(await counting.stats()).toMatchObject({
      totalQueries: 2,
      cacheMisses: 2,
      avgExecutionTime: 8,
    });
  });

  it('counts an invalid execution time as 0 instead of poisoning the mean', async () => {
    const counting = new Counting();
    counting.executed(Number.NaN);
    counting.executed(-5);
    counting.executed(6);

    expect((await counting.stats()).avgExecutionTime).toBe(2);
  });

  it('passes the cache size through', async () => {
    expect((await new Counting().stats(42)).cacheSize).toBe(42);
  });

  it('offers a frozen all-zero snapshot for failure bodies', () => {
    expect(Object.isFrozen(ZERO_CACHE_STATS)).toBe(true);
    expect(Object.values(ZERO_CACHE_STATS).every((value) => value === 0)).toBe(true);
  });
});
