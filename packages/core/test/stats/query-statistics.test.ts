import { QueryStatistics, ZERO_CACHE_STATS } from '../../src/stats';

describe('QueryStatistics', () => {
  it('reports every counter as 0 before any statement', () => {
    expect(new QueryStatistics().snapshot(0)).toEqual(ZERO_CACHE_STATS);
  });

  it('counts hits and every other statement as misses, so hits + misses = total', () => {
    const statistics = new QueryStatistics();
    // 3 cacheable misses, 2 hits, 1 uncached write
    statistics.recordExecuted(10);
    statistics.recordExecuted(20);
    statistics.recordExecuted(30);
    statistics.recordCacheHit();
    statistics.recordCacheHit();
    statistics.recordExecuted(40);

    const stats = statistics.snapshot(3);

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

  it('averages over executed statements only: hits do not pull the mean down', () => {
    const statistics = new QueryStatistics();
    statistics.recordExecuted(3);
    statistics.recordCacheHit();
    statistics.recordCacheHit();

    expect(statistics.snapshot(0).avgExecutionTime).toBe(3);
  });

  it('rounds the mean to 3 decimals and the hit rate to 2', () => {
    const statistics = new QueryStatistics();
    statistics.recordExecuted(1);
    statistics.recordExecuted(1);
    statistics.recordExecuted(2.0001);
    statistics.recordCacheHit();
    statistics.recordCacheHit();

    const stats = statistics.snapshot(0);

    expect(stats.avgExecutionTime).toBe(1.333);
    expect(stats.hitRate).toBe(40);
  });

  it('keeps the hit rate between 0 and 100', () => {
    const onlyHits = new QueryStatistics();
    onlyHits.recordCacheHit();
    const onlyMisses = new QueryStatistics();
    onlyMisses.recordExecuted(1);

    expect(onlyHits.snapshot(0).hitRate).toBe(100);
    expect(onlyHits.snapshot(0).avgExecutionTime).toBe(0);
    expect(onlyMisses.snapshot(0).hitRate).toBe(0);
  });

  it('counts a statement that never ran as a miss without touching the mean', () => {
    const statistics = new QueryStatistics();
    statistics.recordExecuted(8);
    statistics.recordNotExecuted();

    expect(statistics.snapshot(0)).toMatchObject({
      totalQueries: 2,
      cacheMisses: 2,
      avgExecutionTime: 8,
    });
  });

  it('counts an invalid execution time as 0 instead of poisoning the mean', () => {
    const statistics = new QueryStatistics();
    statistics.recordExecuted(Number.NaN);
    statistics.recordExecuted(-5);
    statistics.recordExecuted(6);

    expect(statistics.snapshot(0).avgExecutionTime).toBe(2);
  });

  it('passes the cache size through', () => {
    expect(new QueryStatistics().snapshot(42).cacheSize).toBe(42);
  });

  it('offers a frozen all-zero snapshot for failure bodies', () => {
    expect(Object.isFrozen(ZERO_CACHE_STATS)).toBe(true);
    expect(Object.values(ZERO_CACHE_STATS).every((value) => value === 0)).toBe(true);
  });
});
