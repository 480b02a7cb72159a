import {
  isCacheableStatement,
  MemoryCacheStore,
  ResultCache,
  type ResultCacheOptions,
} from '../../src/cache';
import type { ParsedStatement } from '../../src/parser';
import type { CacheRequest } from '../../src/request';
import type { CacheEntryRecord, CacheStore } from '../../src/ports/cache-store';
import type { CacheScope } from '../../src/ports/connections';
import { readStatement, selectResult } from './fixtures';

const SCOPE: CacheScope = {
  server: '10.0.0.5:5432',
  database: '10.0.0.5:5432/app',
  credentials: 'alice/hmac-a',
};
/** Another user of the same database. */
const OTHER_USER: CacheScope = { ...SCOPE, credentials: 'bob/hmac-b' };
/** Another database of the same server. */
const OTHER_DATABASE: CacheScope = { ...SCOPE, database: '10.0.0.5:5432/other' };
/** A database on another server. */
const OTHER_SERVER: CacheScope = {
  server: '10.0.0.6:5432',
  database: '10.0.0.6:5432/app',
  credentials: 'alice/hmac-a',
};
const CACHED_AT = new Date('2024-05-01T12:00:00.000Z');

function resultCache(overrides: Partial<ResultCacheOptions> = {}): ResultCache {
  return new ResultCache({
    store: new MemoryCacheStore(),
    defaultTtlMs: 60_000,
    maxEntryBytes: 1024 * 1024,
    enabledByDefault: false,
    clock: { date: () => CACHED_AT },
    ...overrides,
  });
}

/** Stores `statement`'s result under its key and returns the key. */
async function cacheRead(
  cache: ResultCache,
  text: string,
  scope = SCOPE,
  reads: string[] | null = ['t'],
) {
  const statement = readStatement(text, { relations: { reads, writes: [] } });
  const key = cache.keyFor(scope, statement, { rowMode: 'object', maxRows: 100 });
  await cache.store({ key, scope, statement, result: selectResult(), executionTime: 2 });
  return key;
}

/**
 * Whether this statement of this request may be served from and kept in the cache, as the service
 * decides it: the request must ask (or the server cache by default, unless the request says
 * `cache: false`), and the statement must be a read with no volatile function and no effect on the
 * session.
 */
function isCacheable(
  cache: ResultCache,
  statement: ParsedStatement,
  request: { cache?: CacheRequest },
): boolean {
  return cache.isCacheRequested(request) && isCacheableStatement(statement);
}

describe('whether a statement is cacheable', () => {
  const read = readStatement('SELECT * FROM t');

  it('caches a read when the request asks, with or without its own TTL', () => {
    const cache = resultCache();
    expect(isCacheable(cache, read, { cache: {} })).toBe(true);
    expect(isCacheable(cache, read, { cache: { ttlMs: 5 } })).toBe(true);
  });

  it('does not cache when the request says nothing and the server default is off', () => {
    expect(isCacheable(resultCache(), read, {})).toBe(false);
  });

  it('caches when the request says nothing and the server default is on', () => {
    expect(isCacheable(resultCache({ enabledByDefault: true }), read, {})).toBe(true);
  });

  it('lets cache: false turn caching off even when the server default is on', () => {
    expect(isCacheable(resultCache({ enabledByDefault: true }), read, { cache: false })).toBe(
      false,
    );
  });

  it.each(['write', 'transaction-control', 'no-transaction', 'session'] as const)(
    'never caches a %s statement',
    (statementClass) => {
      const statement = readStatement('X', { statementClass });
      expect(isCacheable(resultCache({ enabledByDefault: true }), statement, { cache: {} })).toBe(
        false,
      );
    },
  );

  it('never caches a read that calls a volatile function', () => {
    const statement = readStatement('SELECT now()', { callsVolatileFunction: true });
    expect(isCacheable(resultCache(), statement, { cache: {} })).toBe(false);
  });

  it('never caches a read that changes the session', () => {
    const statement = readStatement("SELECT set_config('x', '1', false)", { changesSession: true });
    expect(isCacheable(resultCache(), statement, { cache: {} })).toBe(false);
  });
});

describe('ResultCache.keyFor', () => {
  const cache = resultCache();
  const statement = readStatement('SELECT * FROM t WHERE id = $1');
  const base = { params: [1] as unknown[], rowMode: 'object' as const, maxRows: 100 };
  const baseKey = cache.keyFor(SCOPE, statement, base);

  it('gives the same key for the same inputs', () => {
    expect(
      cache.keyFor(SCOPE, readStatement('SELECT * FROM t WHERE id = $1'), { ...base, params: [1] }),
    ).toBe(baseKey);
  });

  it('differs by scope, so one user never sees another user’s rows', () => {
    expect(cache.keyFor(OTHER_USER, statement, base)).not.toBe(baseKey);
    expect(cache.keyFor(OTHER_DATABASE, statement, base)).not.toBe(baseKey);
  });

  it('differs by statement text', () => {
    expect(cache.keyFor(SCOPE, readStatement('SELECT * FROM t WHERE id = $1 + 0'), base)).not.toBe(
      baseKey,
    );
  });

  it('differs by params, including their JSON types', () => {
    expect(cache.keyFor(SCOPE, statement, { ...base, params: [2] })).not.toBe(baseKey);
    expect(cache.keyFor(SCOPE, statement, { ...base, params: ['1'] })).not.toBe(baseKey);
    expect(cache.keyFor(SCOPE, statement, { ...base, params: [[1]] })).not.toBe(baseKey);
    expect(cache.keyFor(SCOPE, statement, { ...base, params: undefined })).not.toBe(baseKey);
    expect(cache.keyFor(SCOPE, statement, { ...base, params: [] })).not.toBe(
      cache.keyFor(SCOPE, statement, { ...base, params: undefined }),
    );
  });

  it('differs by rowMode', () => {
    expect(cache.keyFor(SCOPE, statement, { ...base, rowMode: 'array' })).not.toBe(baseKey);
  });

  it('differs by maxRows', () => {
    expect(cache.keyFor(SCOPE, statement, { ...base, maxRows: 101 })).not.toBe(baseKey);
  });

  it('cannot be forged by moving text between parts', () => {
    const a = cache.keyFor({ ...SCOPE, credentials: 's' }, readStatement('x","y'), base);
    const b = cache.keyFor({ ...SCOPE, credentials: 's","x' }, readStatement('y'), base);
    expect(a).not.toBe(b);
  });

  it('keys params a JSON body cannot carry without confusing them with look-alikes', () => {
    const keyOf = (params: unknown[]) => cache.keyFor(SCOPE, statement, { ...base, params });
    const when = new Date('2024-01-01T00:00:00.000Z');

    expect(keyOf([10n])).toBe(keyOf([10n]));
    expect(keyOf([10n])).not.toBe(keyOf([10]));
    expect(keyOf([when])).not.toBe(keyOf([when.toISOString()]));
    expect(keyOf([Buffer.from('ab')])).not.toBe(keyOf([{ type: 'Buffer', data: [97, 98] }]));
    expect(keyOf([{ a: 1, b: 2 }])).not.toBe(keyOf([{ b: 2, a: 1 }]));
  });
});

describe('ResultCache.store and lookup', () => {
  it('serves a stored result with its metadata and counts hits', async () => {
    const cache = resultCache();
    const statement = readStatement('SELECT * FROM t');
    const key = cache.keyFor(SCOPE, statement, { rowMode: 'object', maxRows: 100 });

    const stored = await cache.store({
      key,
      scope: SCOPE,
      statement,
      result: selectResult([{ id: 7 }]),
      executionTime: 4.2,
    });
    const first = (await cache.lookup(key))?.record;
    const second = (await cache.lookup(key))?.record;

    expect(stored).toBe('stored');
    expect(first).toMatchObject({
      key,
      scope: SCOPE.database,
      server: SCOPE.server,
      query: 'SELECT * FROM t',
      reads: ['t'],
      executionTime: 4.2,
      cachedAt: CACHED_AT,
      hits: 1,
      result: { rows: [{ id: 7 }], rowCount: 1, command: 'SELECT', truncated: false },
    });
    expect(second?.hits).toBe(2);
  });

  it('misses a key that was never stored', async () => {
    expect(await resultCache().lookup('absent')).toBeUndefined();
  });

  it('measures an entry as the byte length of its JSON', async () => {
    const sets: CacheEntryRecord[] = [];
    const store = recordingStore(sets);
    const cache = resultCache({ store });
    const statement = readStatement('SELECT * FROM t');
    const result = selectResult([{ name: 'é' }]);

    await cache.store({ key: 'k', scope: SCOPE, statement, result, executionTime: 1 });

    const { fields, rows, rowCount, command, truncated } = result;
    expect(sets[0]?.sizeBytes).toBe(
      Buffer.byteLength(JSON.stringify({ rows, fields, rowCount, command, truncated })),
    );
  });

  it('refuses a result over the byte bound, and accepts one exactly at it', async () => {
    const statement = readStatement('SELECT * FROM t');
    const result = selectResult([{ payload: 'x'.repeat(500) }]);
    const { fields, rows, rowCount, command, truncated } = result;
    const size = Buffer.byteLength(JSON.stringify({ rows, fields, rowCount, command, truncated }));

    const tooSmall = resultCache({ maxEntryBytes: size - 1 });
    const justRight = resultCache({ maxEntryBytes: size });

    expect(
      await tooSmall.store({ key: 'k', scope: SCOPE, statement, result, executionTime: 1 }),
    ).toBe('oversize');
    expect(await tooSmall.size()).toBe(0);
    expect(
      await justRight.store({ key: 'k', scope: SCOPE, statement, result, executionTime: 1 }),
    ).toBe('stored');
    expect(await justRight.size()).toBe(1);
  });

  it('refuses a result it cannot serialise', async () => {
    const cache = resultCache();
    const statement = readStatement('SELECT * FROM t');
    const stored = await cache.store({
      key: 'k',
      scope: SCOPE,
      statement,
      result: selectResult([{ id: 1n }]),
      executionTime: 1,
    });
    expect(stored).toBe('oversize');
  });

  it('refuses a statement that is not cacheable, whatever the caller asks', async () => {
    const cache = resultCache();
    const write = readStatement('DELETE FROM t', { statementClass: 'write' });
    const volatile = readStatement('SELECT random()', { callsVolatileFunction: true });

    expect(
      await cache.store({
        key: 'w',
        scope: SCOPE,
        statement: write,
        result: selectResult(),
        executionTime: 1,
      }),
    ).toBe('not-cacheable');
    expect(
      await cache.store({
        key: 'v',
        scope: SCOPE,
        statement: volatile,
        result: selectResult(),
        executionTime: 1,
      }),
    ).toBe('not-cacheable');
    expect(await cache.size()).toBe(0);
  });

  it('uses the request TTL when given, else the default', async () => {
    const ttls: number[] = [];
    const store = recordingStore([], ttls);
    const cache = resultCache({ store, defaultTtlMs: 60_000 });
    const statement = readStatement('SELECT * FROM t');

    await cache.store({
      key: 'a',
      scope: SCOPE,
      statement,
      result: selectResult(),
      executionTime: 1,
    });
    await cache.store({
      key: 'b',
      scope: SCOPE,
      statement,
      result: selectResult(),
      executionTime: 1,
      ttlMs: 250,
    });

    expect(ttls).toEqual([60_000, 250]);
  });
});

describe('ResultCache.invalidate', () => {
  it('removes every entry of the written database, for every user, whatever they read', async () => {
    const cache = resultCache();
    const readsT = await cacheRead(cache, 'SELECT * FROM t', SCOPE, ['t']);
    const readsU = await cacheRead(cache, 'SELECT * FROM u', SCOPE, ['u']);
    const otherUser = await cacheRead(cache, 'SELECT * FROM t', OTHER_USER, ['t']);
    const otherDatabase = await cacheRead(cache, 'SELECT * FROM t', OTHER_DATABASE, ['t']);

    expect(await cache.invalidate(SCOPE, 'database')).toBe(3);
    expect(await cache.lookup(readsT)).toBeUndefined();
    expect(await cache.lookup(readsU)).toBeUndefined();
    expect(await cache.lookup(otherUser)).toBeUndefined();
    expect(await cache.lookup(otherDatabase)).toBeDefined();
  });

  it('removes every database of the server when the write may reach beyond one', async () => {
    const cache = resultCache();
    await cacheRead(cache, 'SELECT * FROM t', SCOPE, ['t']);
    await cacheRead(cache, 'SELECT * FROM t', OTHER_DATABASE, ['t']);
    const otherServer = await cacheRead(cache, 'SELECT * FROM t', OTHER_SERVER, ['t']);

    expect(await cache.invalidate(SCOPE, 'server')).toBe(2);
    expect(await cache.size()).toBe(1);
    expect(await cache.lookup(otherServer)).toBeDefined();
  });

  it('does not store a read that a write to its scope may have overtaken', async () => {
    const cache = resultCache();
    const statement = readStatement('SELECT * FROM t');
    const key = cache.keyFor(SCOPE, statement, { rowMode: 'object', maxRows: 100 });

    const readMark = await cache.markBeforeRead(SCOPE);
    await cache.invalidate(OTHER_USER, 'database'); // a write commits while the read runs
    const stored = await cache.store({
      key,
      scope: SCOPE,
      statement,
      result: selectResult(),
      executionTime: 1,
      readMark,
    });

    expect(stored).toBe('refused');
    expect(await cache.lookup(key)).toBeUndefined();
  });

  it('does not store a read that a write to its whole server may have overtaken', async () => {
    const cache = resultCache();
    const statement = readStatement('SELECT * FROM t');
    const readMark = await cache.markBeforeRead(SCOPE);
    await cache.invalidate(OTHER_DATABASE, 'server');

    expect(
      await cache.store({
        key: 'k',
        scope: SCOPE,
        statement,
        result: selectResult(),
        executionTime: 1,
        readMark,
      }),
    ).toBe('refused');
  });

  it('still stores a read when only another scope was written meanwhile', async () => {
    const cache = resultCache();
    const statement = readStatement('SELECT * FROM t');
    const readMark = await cache.markBeforeRead(SCOPE);
    await cache.invalidate(OTHER_DATABASE, 'database');

    expect(
      await cache.store({
        key: 'k',
        scope: SCOPE,
        statement,
        result: selectResult(),
        executionTime: 1,
        readMark,
      }),
    ).toBe('stored');
  });
});

describe('ResultCache statistics helpers', () => {
  it('lists recent entries as CacheEntry objects, newest first, at most 10 by default', async () => {
    let tick = 0;
    const cache = resultCache({
      clock: { date: () => new Date(Date.UTC(2024, 0, 1, 0, 0, tick++)) },
    });
    for (let index = 0; index < 12; index += 1) await cacheRead(cache, `SELECT ${index} FROM t`);
    const newestKey = cache.keyFor(SCOPE, readStatement('SELECT 11 FROM t'), {
      rowMode: 'object',
      maxRows: 100,
    });
    await cache.lookup(newestKey);

    const entries = await cache.recentEntries();

    expect(entries).toHaveLength(10);
    expect(entries[0]).toEqual({
      query: 'SELECT 11 FROM t',
      executionTime: 2,
      timestamp: '2024-01-01T00:00:11.000Z',
      hits: 1,
    });
    expect(entries.map((entry) => entry.query).at(-1)).toBe('SELECT 2 FROM t');
    expect(Object.keys(entries[1] ?? {}).sort()).toEqual([
      'executionTime',
      'hits',
      'query',
      'timestamp',
    ]);
  });

  it('reports size and empties on clear', async () => {
    const cache = resultCache();
    await cacheRead(cache, 'SELECT 1 FROM t');
    await cacheRead(cache, 'SELECT 2 FROM t');

    expect(await cache.size()).toBe(2);
    await cache.clear();
    expect(await cache.size()).toBe(0);
    expect(await cache.recentEntries()).toEqual([]);
  });
});

/** A store that records what it is given and keeps nothing. */
function recordingStore(sets: CacheEntryRecord[], ttls: number[] = []): CacheStore {
  return {
    get: async () => undefined,
    mark: async () => '0',
    set: async (entry, ttlMs) => {
      sets.push(entry);
      ttls.push(ttlMs);
      return true;
    },
    invalidate: async () => 0,
    clear: async () => undefined,
    size: async () => sets.length,
    recent: async () => [],
  };
}
