/** docs/decisions.md 8: the opt-in result cache and its statistics, through HTTP. */
import { eventually } from '@sqlgate/testing';
import {
  createQueryService,
  MemoryCacheStore,
  type CacheStore,
  type ConnectionProvider,
} from '@sqlgate/core';
import { createPostgresConnections } from '@sqlgate/postgres-adapter';
import request from 'supertest';
import { createApp } from '../src/app';
import { createTestApp, database, sql, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));
const cacheStats = async () =>
  (await request(testApp.app).get('/api/stats/cache').expect(200)).body;

beforeAll(async () => {
  await sql(`DROP TABLE IF EXISTS cache_t; CREATE TABLE cache_t (id int);
    DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cache_reader') THEN CREATE ROLE cache_reader LOGIN PASSWORD 'reader-pw'; END IF;
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cache_stranger') THEN CREATE ROLE cache_stranger LOGIN PASSWORD 'stranger-pw'; END IF;
    END $$;
    GRANT SELECT ON cache_t TO cache_reader;`);
});
beforeEach(async () => {
  testApp = createTestApp();
  await sql('TRUNCATE cache_t; INSERT INTO cache_t VALUES (1)');
});
afterEach(() => testApp.close());

// The test database listens on one loopback address; 127.0.0.3 is this machine too.
(database.host === '127.0.0.1' ? it : it.skip)(
  'never serves what one loopback address answered for another, where nothing may listen',
  async () => {
    await query({ sql: 'SELECT id FROM cache_t', cache: true }).expect(200);
    const elsewhere = await query({
      sql: 'SELECT id FROM cache_t',
      cache: true,
      host: '127.0.0.3',
    });

    expect(elsewhere.body).not.toHaveProperty('rows');
    expect(elsewhere.body).not.toHaveProperty('cached');
  },
);

it('runs identical concurrent misses once against PostgreSQL: one miss, the others hits', async () => {
  // About a tenth of a second of work, and no volatile function: cacheable.
  const slow = 'SELECT count(*) AS n FROM generate_series(1, 2000000)';
  const answers = await Promise.all(
    [1, 2, 3, 4].map(() => query({ sql: slow, cache: true }).expect(200)),
  );

  const statuses = answers.map((answer) => answer.body.cacheStatus).sort();
  expect(statuses).toEqual(['hit', 'hit', 'hit', 'miss']);
  for (const answer of answers) expect(answer.body.rows).toEqual([{ n: '2000000' }]);
});

it('serves a stale entry within swrMs while it is refreshed from PostgreSQL', async () => {
  const cache = { ttlMs: 100, swrMs: 60_000 };
  const read = () => query({ sql: 'SELECT count(*) AS n FROM cache_t', cache }).expect(200);
  expect((await read()).body).toMatchObject({ cacheStatus: 'miss', rows: [{ n: '1' }] });
  await sql('INSERT INTO cache_t VALUES (2)'); // behind the service's back
  await new Promise((resolve) => setTimeout(resolve, 200));

  expect((await read()).body).toMatchObject({ cacheStatus: 'stale', rows: [{ n: '1' }] });
  let refreshed: unknown;
  await eventually(async () => {
    const { body } = await read();
    if ((body.rows as { n: string }[])[0]?.n !== '2') return false;
    refreshed = body.cacheStatus;
  });
  // The refresh kept the new rows, served from the cache (fresh, or stale again past 100 ms).
  expect(['hit', 'stale']).toContain(refreshed);
});

it('serves a repeated read from the cache, marked cached: true', async () => {
  const first = await query({ sql: 'SELECT id FROM cache_t', cache: true }).expect(200);
  expect(first.body).not.toHaveProperty('cached');
  await sql('INSERT INTO cache_t VALUES (2)'); // behind the service's back: the cache cannot know
  const second = await query({ sql: 'SELECT id FROM cache_t', cache: true }).expect(200);
  expect(second.body).toMatchObject({ rows: [{ id: 1 }], cached: true });
});

it('caches nothing unless asked', async () => {
  await query({ sql: 'SELECT id FROM cache_t' }).expect(200);
  await query({ sql: 'SELECT id FROM cache_t' }).expect(200);
  expect((await cacheStats()).stats.cacheSize).toBe(0);
});

it('caches by default with QUERY_CACHE_DEFAULT=on, unless the request says cache: false', async () => {
  const cachingApp = createTestApp({ queryCacheDefault: true });
  try {
    const post = (body: Record<string, unknown>) =>
      request(cachingApp.app).post('/api/query').send(target(body));
    await post({ sql: 'SELECT id FROM cache_t' }).expect(200);
    expect((await post({ sql: 'SELECT id FROM cache_t' }).expect(200)).body.cached).toBe(true);
    expect(
      (await post({ sql: 'SELECT id FROM cache_t', cache: false }).expect(200)).body.cached,
    ).toBeUndefined();
  } finally {
    await cachingApp.close();
  }
});

it('never caches volatile functions', async () => {
  await query({ sql: 'SELECT now(), random()', cache: true }).expect(200);
  const again = await query({ sql: 'SELECT now(), random()', cache: true }).expect(200);
  expect(again.body.cached).toBeUndefined();
});

it('a write through the service invalidates the cached reads of the written table', async () => {
  await query({ sql: 'SELECT id FROM cache_t ORDER BY id', cache: true }).expect(200);
  await query({ sql: 'INSERT INTO cache_t VALUES (2)' }).expect(200);
  const fresh = await query({ sql: 'SELECT id FROM cache_t ORDER BY id', cache: true }).expect(200);
  expect(fresh.body.cached).toBeUndefined();
  expect(fresh.body.rows).toEqual([{ id: 1 }, { id: 2 }]);
});

it('a write inside a transaction invalidates too, and unknown writes (DDL, DO) drop all of the target', async () => {
  await query({ sql: 'SELECT id FROM cache_t', cache: true }).expect(200);
  await query({ sql: 'UPDATE cache_t SET id = 5; SELECT 1' }).expect(200);
  expect(
    (await query({ sql: 'SELECT id FROM cache_t', cache: true }).expect(200)).body.rows,
  ).toEqual([{ id: 5 }]);
  await query({ sql: 'DO $$ BEGIN UPDATE cache_t SET id = 6; END $$' }).expect(200);
  expect(
    (await query({ sql: 'SELECT id FROM cache_t', cache: true }).expect(200)).body.rows,
  ).toEqual([{ id: 6 }]);
});

it('never serves one user the rows cached for another', async () => {
  const asUser = (user: string, password: string) =>
    request(testApp.app)
      .post('/api/query')
      .send(target({ user, password, sql: 'SELECT id FROM cache_t', cache: true }));
  await asUser('cache_reader', 'reader-pw').expect(200);
  await asUser('cache_reader', 'reader-pw').expect(200);
  const stranger = await asUser('cache_stranger', 'stranger-pw').expect(400);
  expect(stranger.body.error.code).toBe('42501');
  const entries = JSON.stringify((await cacheStats()).entries);
  expect(entries).not.toContain('reader-pw');
  expect(entries).not.toContain(database.password);
});

it('counts a known sequence: 1 uncached write, 3 cacheable misses, 2 hits', async () => {
  // The write comes first: a write drops every cached entry of its database (docs/decisions.md 10.20).
  await query({ sql: 'INSERT INTO cache_t VALUES (9)' }).expect(200);
  await query({ sql: 'SELECT 1 AS a', cache: true }).expect(200);
  await query({ sql: 'SELECT 2 AS b', cache: true }).expect(200);
  await query({ sql: 'SELECT 3 AS c', cache: true }).expect(200);
  await query({ sql: 'SELECT 1 AS a', cache: true }).expect(200);
  await query({ sql: 'SELECT 2 AS b', cache: true }).expect(200);
  const { stats, entries } = await cacheStats();
  expect(stats).toEqual({
    totalQueries: 6,
    cacheHits: 2,
    cacheMisses: 4,
    hitRate: 33.33,
    avgExecutionTime: expect.any(Number),
    cacheSize: 3,
  });
  expect(entries.map((entry: { query: string }) => entry.query)).toEqual([
    'SELECT 3 AS c',
    'SELECT 2 AS b',
    'SELECT 1 AS a',
  ]);
  expect(entries[2]).toEqual({
    query: 'SELECT 1 AS a',
    executionTime: expect.any(Number),
    timestamp: expect.any(String),
    hits: 1,
  });
  expect(new Date(entries[2].timestamp).toISOString()).toBe(entries[2].timestamp);
});

it('DELETE /api/stats/cache empties the cache', async () => {
  await query({ sql: 'SELECT 1 AS a', cache: true }).expect(200);
  const response = await request(testApp.app).delete('/api/stats/cache').expect(200);
  expect(response.body).toEqual({ success: true, message: 'Cache cleared successfully' });
  expect((await cacheStats()).stats.cacheSize).toBe(0);
});

describe('when the registry or the store fails', () => {
  const failing = async (): Promise<never> => {
    throw new Error('store down');
  };
  const brokenStore: CacheStore = Object.assign(new MemoryCacheStore(), {
    size: failing,
    recent: failing,
    clear: failing,
  });
  const connections = createPostgresConnections();
  const brokenConnections: ConnectionProvider = {
    ...connections,
    poolStats: () => {
      throw new Error('registry down');
    },
  };
  const service = createQueryService({ connections: brokenConnections, cacheStore: brokenStore });
  const app = createApp({ service });
  afterAll(() => service.close());

  it('answers the 500 bodies of docs/interface.md', async () => {
    expect((await request(app).get('/api/stats/pools').expect(500)).body).toEqual({
      error: 'Failed to retrieve pool statistics',
      stats: [],
    });
    expect((await request(app).get('/api/stats/cache').expect(500)).body).toEqual({
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
    expect((await request(app).delete('/api/stats/cache').expect(500)).body).toEqual({
      error: 'Failed to clear cache',
    });
  });
});
