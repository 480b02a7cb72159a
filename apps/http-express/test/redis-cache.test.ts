/**
 * Two sqlgate instances sharing one Redis cache (QUERY_CACHE_REDIS_URL, docs/decisions.md 10.27):
 * a write through one is seen by reads through the other at once, their statistics agree, and a
 * Redis that dies or freezes costs no query: the cache is bypassed until it comes back.
 */
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { sql, target } from './support';

const TABLE = 'redis_cache_counter';
/** What every instance sharing the Redis is configured with (QUERY_CACHE_SECRET). */
const SHARED_SECRET = 'a shared secret of at least thirty-two characters';
const CACHE = { ttlMs: 60_000 };
/** Generous: 50 ms per Redis call, on a loaded 2-core machine. */
const REDIS_BOUND_SLACK_MS = 400;

let redis: LocalRedis;
let first: RunningServer;
let second: RunningServer;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

async function post(server: RunningServer, body: Record<string, unknown>): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...target(), ...body }),
  });
  const parsed = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body: parsed, ms: performance.now() - started };
}

async function stats(server: RunningServer): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${server.url}/api/stats/cache`);
  const parsed = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body: parsed, ms: performance.now() - started };
}

const readCounter = (server: RunningServer) =>
  post(server, { sql: `SELECT n FROM ${TABLE} WHERE id = 1`, cache: CACHE });
const writeCounter = (server: RunningServer, n: number) =>
  post(server, { sql: `UPDATE ${TABLE} SET n = ${n} WHERE id = 1` });

function valueOf(answer: Answer): number {
  expect(answer.status).toBe(200);
  return (answer.body.rows as { n: number }[])[0]?.n as number;
}

function startInstance(): Promise<RunningServer> {
  return startServer({
    port: 0,
    hostname: '127.0.0.1',
    queryCacheRedisUrl: redis.url,
    queryCacheSecret: SHARED_SECRET,
    logger: pino({ level: 'silent' }),
  });
}

beforeAll(async () => {
  redis = await startLocalRedis();
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
  await sql(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, n int NOT NULL)`);
  await sql(`INSERT INTO ${TABLE} VALUES (1, 0)`);
  [first, second] = await Promise.all([startInstance(), startInstance()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await redis?.stop();
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
});

describe('two instances, one Redis cache', () => {
  it('serves an entry cached by one instance from the other', async () => {
    await writeCounter(first, 0);
    const miss = await readCounter(first);
    const hit = await readCounter(second);

    expect(miss.body).toMatchObject({ cacheStatus: 'miss', rows: [{ n: 0 }] });
    expect(hit.body).toMatchObject({ cacheStatus: 'hit', cached: true, rows: [{ n: 0 }] });
  });

  it('never serves a read older than a write answered by either instance (1,000 pairs)', async () => {
    const stale: string[] = [];
    let sharedHits = 0;
    for (let n = 1; n <= 1000; n += 1) {
      const [writer, reader] = n % 2 === 0 ? [first, second] : [second, first];
      expect((await writeCounter(writer, n)).status).toBe(200);
      // The reader misses and caches; the writer then hits what the reader cached.
      const read = valueOf(await readCounter(reader));
      const fromWriter = await readCounter(writer);
      const again = valueOf(fromWriter);
      if (fromWriter.body.cacheStatus === 'hit') sharedHits += 1;
      if (read !== n || again !== n) stale.push(`wrote ${n}, read ${read} then ${again}`);
    }
    expect(stale).toEqual([]);
    // The writer served what the reader had just cached: the cache really was shared.
    expect(sharedHits).toBe(1000);
  }, 180_000);

  it('keeps every read at or after the last answered write while both instances race', async () => {
    const instances = [first, second];
    let acknowledged = 0;
    let writing = true;
    const violations: string[] = [];
    const reader = async (index: number): Promise<number> => {
      let reads = 0;
      while (writing) {
        const floor = acknowledged;
        const answer = await readCounter(instances[(index + reads) % 2] as RunningServer);
        const seen = valueOf(answer);
        if (seen < floor) violations.push(`read ${seen} after write ${floor} was answered`);
        reads += 1;
      }
      return reads;
    };
    const readers = [0, 1, 2, 3].map(reader);
    for (let n = 10_001; n <= 10_300; n += 1) {
      expect((await writeCounter(instances[n % 2] as RunningServer, n)).status).toBe(200);
      acknowledged = n;
    }
    writing = false;
    const reads = await Promise.all(readers);

    expect(violations).toEqual([]);
    expect(reads.reduce((sum, each) => sum + each, 0)).toBeGreaterThan(300);
  }, 120_000);

  it('reports the same statistics from both instances', async () => {
    await readCounter(first);
    await readCounter(second);
    // Counters reach Redis in batches: past one flush interval both instances agree.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [fromFirst, fromSecond] = await Promise.all([stats(first), stats(second)]);

    expect(fromFirst.status).toBe(200);
    expect(fromSecond.body.stats).toEqual(fromFirst.body.stats);
    expect(fromSecond.body.entries).toEqual(fromFirst.body.entries);
    const counted = fromFirst.body.stats as Record<string, number>;
    expect(counted.totalQueries).toBeGreaterThan(3000);
    expect(counted.cacheSize).toBe(1);
  });
});

describe('Redis down or frozen', () => {
  it('answers every query from PostgreSQL while Redis is dead, and recovers after its restart', async () => {
    await writeCounter(first, 7);
    const failures: string[] = [];
    const statuses = new Set<string>();
    let running = true;
    const load = (async () => {
      let turn = 0;
      while (running) {
        const server = turn % 2 === 0 ? first : second;
        const answer = await readCounter(server);
        if (answer.status !== 200 || valueOf(answer) !== 7) {
          failures.push(JSON.stringify(answer.body));
        }
        statuses.add(`${answer.body.cacheStatus}/${answer.body.cacheReason ?? ''}`);
        turn += 1;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await redis.kill();
    await new Promise((resolve) => setTimeout(resolve, 500));

    const down = await stats(first);
    expect(down.status).toBe(500);
    expect(down.body).toEqual({
      error: 'Failed to retrieve cache statistics',
      stats: {
        totalQueries: 0,
        cacheHits: 0,
        cacheMisses: 0,
        hitRate: 0,
        avgExecutionTime: 0,
        cacheSize: 0,
      },
      entries: [],
    });
    // Monitoring still works: the cache gauges keep their last values.
    const metrics = await fetch(`${first.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('sqlgate_cache_bypasses_total{reason="unavailable"}');
    const write = await writeCounter(second, 7);
    expect(write.status).toBe(200);

    await redis.restart();
    // It reconnects by itself: reads are cached and served again.
    let recovered = false;
    for (let attempt = 0; attempt < 100 && !recovered; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      recovered = (await readCounter(first)).body.cacheStatus === 'hit';
    }
    running = false;
    await load;

    expect(failures).toEqual([]);
    expect(statuses).toContain('bypass/unavailable');
    expect(recovered).toBe(true);
    expect((await stats(second)).status).toBe(200);
  }, 60_000);

  it('bounds every query by the Redis timeout while Redis is frozen', async () => {
    await writeCounter(first, 8);
    await readCounter(first);
    await redis.freeze();
    try {
      const answers = await Promise.all([readCounter(first), readCounter(second)]);
      for (const answer of answers) {
        expect(valueOf(answer)).toBe(8);
        expect(answer.body).toMatchObject({ cacheStatus: 'bypass', cacheReason: 'unavailable' });
        expect(answer.ms).toBeLessThan(50 + REDIS_BOUND_SLACK_MS);
      }
      const frozenStats = await stats(first);
      expect(frozenStats.status).toBe(500);
      expect(frozenStats.ms).toBeLessThan(50 * 3 + REDIS_BOUND_SLACK_MS);
    } finally {
      await redis.thaw();
    }
    let recovered = false;
    for (let attempt = 0; attempt < 50 && !recovered; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const answer = await readCounter(second);
      recovered = answer.body.cacheStatus === 'hit' || answer.body.cacheStatus === 'miss';
    }
    expect(recovered).toBe(true);
  }, 60_000);
});

describe('configuration', () => {
  it('refuses a Redis cache without the shared secret, or with a short one, naming the variable', async () => {
    await expect(
      startServer({ port: 0, queryCacheRedisUrl: redis.url, logger: pino({ level: 'silent' }) }),
    ).rejects.toThrow(/QUERY_CACHE_REDIS_URL needs QUERY_CACHE_SECRET/);
    await expect(
      startServer({
        port: 0,
        queryCacheRedisUrl: redis.url,
        queryCacheSecret: 'short',
        logger: pino({ level: 'silent' }),
      }),
    ).rejects.toThrow(/QUERY_CACHE_SECRET must be at least 32 characters/);
  });

  it('refuses a URL that is not redis:// without repeating it', () => {
    const secret = 'https://user:hunter2@example.com';
    expect(() => loadConfig({ QUERY_CACHE_REDIS_URL: secret })).toThrow(
      /QUERY_CACHE_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    try {
      loadConfig({ QUERY_CACHE_REDIS_URL: secret });
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
    }
    expect(() => loadConfig({ QUERY_CACHE_REDIS_PREFIX: 'has space' })).toThrow(
      /QUERY_CACHE_REDIS_PREFIX/,
    );
    expect(() => loadConfig({ QUERY_CACHE_REDIS_TIMEOUT_MS: '0' })).toThrow(
      /QUERY_CACHE_REDIS_TIMEOUT_MS/,
    );
  });
});
