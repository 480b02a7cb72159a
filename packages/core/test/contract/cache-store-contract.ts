/**
 * What every CacheStore must do, as the result cache relies on it (src/ports/cache-store.ts). The
 * same suite runs against the in-memory store (test/contract/memory-cache-store.contract.test.ts)
 * and against the Redis store on a real Redis (packages/redis-cache/test), so a store shared by
 * several instances promises what the in-memory one does.
 *
 * Only what the port documents is checked. Two things a store may do differently are left out: a
 * write that names relations may remove more entries than those reading them (removing every entry
 * of the place is conservative and correct), and marks are opaque (the in-memory store advances
 * one mark for every place, the Redis store one per database and server).
 */
import { RawJson } from '../../src/json';
import { serializeResponse } from '../../src/json';
import type {
  CacheEntryRecord,
  CacheEntrySummary,
  CacheStore,
  EntryPlace,
} from '../../src/ports/cache-store';

export interface CacheStoreContractOptions {
  /**
   * Milliseconds to wait past a TTL before an entry must be gone: a store whose clock is another
   * machine's (Redis) may need a little more than the in-memory one. Default 50.
   */
  expirySlackMs?: number;
}

/** Entries live long enough for any test unless a test says otherwise. */
const LONG_TTL_MS = 60_000;
/** Short enough to wait for, long enough to read the entry back first on a loaded machine. */
const SHORT_TTL_MS = 300;

const placeA: EntryPlace = { scope: 'db-a@server-1', server: 'server-1' };
const placeB: EntryPlace = { scope: 'db-b@server-1', server: 'server-1' };
const placeC: EntryPlace = { scope: 'db-c@server-2', server: 'server-2' };

let cachedAtMs = Date.parse('2025-01-01T00:00:00.000Z');

/** A record at `place`, cached one second after the previous one made here. */
export function contractRecord(
  key: string,
  place: EntryPlace = placeA,
  overrides: Partial<CacheEntryRecord> = {},
): CacheEntryRecord {
  cachedAtMs += 1000;
  return {
    key,
    ...place,
    query: `SELECT * FROM t WHERE k = '${key}'`,
    reads: ['t'],
    result: {
      rows: [{ k: key, n: 1 }],
      fields: [{ name: 'k', dataTypeID: 25 }],
      rowCount: 1,
      command: 'SELECT',
      truncated: false,
    },
    sizeBytes: 100,
    executionTime: 1.25,
    cachedAt: new Date(cachedAtMs),
    freshMs: 30_000,
    hits: 0,
    ...overrides,
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const keysOf = (records: CacheEntrySummary[]) => records.map((each) => each.key);

/**
 * Declares the contract tests for one store. `makeStore` is called before each test and must give
 * a store that holds no entry; the store is closed after the test.
 */
export function describeCacheStoreContract(
  name: string,
  makeStore: () => CacheStore | Promise<CacheStore>,
  options: CacheStoreContractOptions = {},
): void {
  const slack = options.expirySlackMs ?? 50;

  describe(`${name}: the cache store contract`, () => {
    let store: CacheStore;

    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close?.();
    });

    describe('get and set', () => {
      it('returns undefined for a key never set', async () => {
        expect(await store.get('absent')).toBeUndefined();
      });

      it('keeps an entry and serves it with one more hit on each get', async () => {
        const entry = contractRecord('a');
        expect(await store.set(entry, LONG_TTL_MS)).toBe(true);

        expect(await store.get('a')).toEqual({ ...entry, hits: 1 });
        expect((await store.get('a'))?.hits).toBe(2);
        expect((await store.recent(1))[0]?.hits).toBe(2);
      });

      it('serves the result as it was given: json text, -0, a Date for cachedAt', async () => {
        const rows = [
          { j: new RawJson('{"n": 12345678901234567890123, "x": 1.10}'), z: new RawJson('-0') },
          [[new RawJson('[1.10]'), null], 'text', 1.5, true, null],
        ];
        const entry = contractRecord('values', placeA, {
          result: { rows, fields: [], rowCount: 2, command: 'SELECT', truncated: true },
        });
        await store.set(entry, LONG_TTL_MS);

        const served = await store.get('values');
        expect(served?.cachedAt).toBeInstanceOf(Date);
        expect(served?.cachedAt.getTime()).toBe(entry.cachedAt.getTime());
        expect(serializeResponse(served?.result)).toBe(serializeResponse(entry.result));
        expect(served).toEqual({ ...entry, hits: 1 });
      });

      it('keeps keys of any form apart: a long JSON text, a digest, unicode', async () => {
        const keys = [
          JSON.stringify(['db\u0000user', `SELECT '${'x'.repeat(450)}'`, 'object', 100, null]),
          'a'.repeat(64),
          'ключ 🔑 "quoted" *?[glob]',
        ];
        for (const key of keys) await store.set(contractRecord(key), LONG_TTL_MS);

        for (const key of keys) expect((await store.get(key))?.key).toBe(key);
        expect(await store.size()).toBe(3);
      });

      it('replaces an entry set again under its key, hits starting again', async () => {
        await store.set(contractRecord('a', placeA, { executionTime: 1 }), LONG_TTL_MS);
        await store.get('a');
        await store.set(contractRecord('a', placeA, { executionTime: 2 }), LONG_TTL_MS);

        expect(await store.size()).toBe(1);
        expect(await store.get('a')).toMatchObject({ executionTime: 2, hits: 1 });
      });

      it('hands out copies: changing what it gave or was given does not change the entry', async () => {
        const entry = contractRecord('a');
        await store.set(entry, LONG_TTL_MS);
        entry.query = 'changed after set';
        entry.hits = 50;

        const served = await store.get('a');
        if (!served) throw new Error('the entry is missing');
        served.hits = 99;
        served.query = 'changed after get';

        expect(await store.get('a')).toMatchObject({
          hits: 2,
          query: "SELECT * FROM t WHERE k = 'a'",
        });
        expect((await store.recent(1))[0]).toMatchObject({ hits: 2 });
      });
    });

    describe('expiry', () => {
      it('stops serving an entry once its TTL has passed, and stops counting it', async () => {
        await store.set(contractRecord('short'), SHORT_TTL_MS);
        await store.set(contractRecord('long'), LONG_TTL_MS);
        expect(await store.get('short')).toBeDefined();

        await pause(SHORT_TTL_MS + slack);

        expect(await store.get('short')).toBeUndefined();
        expect(await store.get('long')).toBeDefined();
        expect(await store.size()).toBe(1);
        expect(keysOf(await store.recent(10))).toEqual(['long']);
      });

      it('counts the TTL from set, not from the last hit', async () => {
        await store.set(contractRecord('a'), SHORT_TTL_MS);
        await pause(SHORT_TTL_MS / 2);
        expect(await store.get('a')).toBeDefined();

        await pause(SHORT_TTL_MS / 2 + slack);

        expect(await store.get('a')).toBeUndefined();
      });

      it.each([0, -1, Number.NaN])(
        'keeps nothing for a TTL of %p, and removes the older entry under the key',
        async (ttl) => {
          await store.set(contractRecord('a'), LONG_TTL_MS);

          expect(await store.set(contractRecord('a'), ttl)).toBe(false);

          expect(await store.get('a')).toBeUndefined();
          expect(await store.size()).toBe(0);
          expect(await store.recent(10)).toEqual([]);
        },
      );
    });

    describe('freshness', () => {
      it('serves an entry past its fresh time only to a lookup that accepts that much staleness, counting only those hits', async () => {
        const entry = contractRecord('aging', placeA, { freshMs: 1000 });
        await store.set(entry, LONG_TTL_MS);
        const fiveSecondsLater = entry.cachedAt.getTime() + 5000;

        expect(await store.get('aging', { nowMs: fiveSecondsLater, staleAcceptedMs: 0 })).toBe(
          undefined,
        );
        expect(await store.get('aging', { nowMs: fiveSecondsLater, staleAcceptedMs: 3999 })).toBe(
          undefined,
        );
        const served = await store.get('aging', { nowMs: fiveSecondsLater, staleAcceptedMs: 4000 });
        expect(served?.hits).toBe(1);
        expect(
          (await store.get('aging', { nowMs: entry.cachedAt.getTime() + 500, staleAcceptedMs: 0 }))
            ?.hits,
        ).toBe(2);
        expect((await store.recent(1))[0]?.hits).toBe(2);
      });
    });

    describe('marks', () => {
      it('keeps an entry set with a mark when nothing was invalidated since', async () => {
        const mark = await store.mark(placeA);
        expect(typeof mark).toBe('string');
        expect(await store.mark(placeA)).toBe(mark);

        expect(await store.set(contractRecord('a'), LONG_TTL_MS, mark)).toBe(true);
        expect(await store.get('a')).toBeDefined();
      });

      it.each([
        ['its database', { scope: placeA.scope }],
        ['its server', { server: placeA.server }],
      ])(
        'refuses an entry whose mark was taken before %s was invalidated',
        async (_what, where) => {
          const mark = await store.mark(placeA);
          await store.invalidate(where, null);

          expect(await store.set(contractRecord('a'), LONG_TTL_MS, mark)).toBe(false);

          expect(await store.get('a')).toBeUndefined();
          expect(await store.size()).toBe(0);
        },
      );

      it('refuses it for an invalidation that named the relations it reads', async () => {
        const mark = await store.mark(placeA);
        await store.invalidate({ scope: placeA.scope }, ['t']);

        expect(await store.set(contractRecord('a'), LONG_TTL_MS, mark)).toBe(false);
      });

      it.each([
        ['another database of its server', { scope: placeB.scope }],
        ['another server', { server: placeC.server }],
        ['a database of another server', { scope: placeC.scope }],
      ])('keeps an entry marked before %s was invalidated', async (_what, where) => {
        const mark = await store.mark(placeA);
        await store.invalidate(where, null);

        expect(await store.set(contractRecord('a'), LONG_TTL_MS, mark)).toBe(true);
        expect(await store.get('a')).toBeDefined();
      });

      it('keeps an entry whose mark was taken after the invalidation', async () => {
        await store.invalidate({ scope: placeA.scope }, null);
        const mark = await store.mark(placeA);

        expect(await store.set(contractRecord('a'), LONG_TTL_MS, mark)).toBe(true);
      });

      it('keeps an entry set without a mark, whatever was invalidated before', async () => {
        await store.invalidate({ scope: placeA.scope }, null);
        await store.invalidate({ server: placeA.server }, null);

        expect(await store.set(contractRecord('a'), LONG_TTL_MS)).toBe(true);
      });

      it('keeps refusing old marks after clear', async () => {
        const before = await store.mark(placeA);
        await store.set(contractRecord('a'), LONG_TTL_MS);
        await store.clear();
        await store.invalidate({ scope: placeA.scope }, null);

        expect(await store.set(contractRecord('a'), LONG_TTL_MS, before)).toBe(false);
      });

      it('keeps an entry marked before a clear that no invalidation followed', async () => {
        const before = await store.mark(placeA);
        await store.clear();

        expect(await store.set(contractRecord('a'), LONG_TTL_MS, before)).toBe(true);
      });
    });

    describe('invalidate', () => {
      beforeEach(async () => {
        await store.set(contractRecord('a1', placeA), LONG_TTL_MS);
        await store.set(contractRecord('a2', placeA, { reads: null }), LONG_TTL_MS);
        await store.set(contractRecord('b1', placeB), LONG_TTL_MS);
        await store.set(contractRecord('c1', placeC), LONG_TTL_MS);
      });

      it('removes every entry of a database, and says how many', async () => {
        expect(await store.invalidate({ scope: placeA.scope }, null)).toBe(2);

        expect(await store.get('a1')).toBeUndefined();
        expect(await store.get('a2')).toBeUndefined();
        expect(await store.get('b1')).toBeDefined();
        expect(await store.get('c1')).toBeDefined();
        expect(await store.size()).toBe(2);
      });

      it('removes the entries that read a written relation, and those whose reads are unknown', async () => {
        expect(await store.invalidate({ scope: placeA.scope }, ['t'])).toBe(2);

        expect(await store.get('a1')).toBeUndefined();
        expect(await store.get('a2')).toBeUndefined();
      });

      it('removes every database of a server when asked by server', async () => {
        expect(await store.invalidate({ server: placeA.server }, null)).toBe(3);

        expect(keysOf(await store.recent(10))).toEqual(['c1']);
        expect(await store.get('c1')).toBeDefined();
      });

      it('counts nothing for a place without entries, or already invalidated', async () => {
        expect(await store.invalidate({ scope: 'db-z@server-9' }, null)).toBe(0);
        expect(await store.invalidate({ server: 'server-9' }, null)).toBe(0);
        await store.invalidate({ scope: placeA.scope }, null);
        expect(await store.invalidate({ scope: placeA.scope }, null)).toBe(0);
      });

      it('does not count expired entries', async () => {
        await store.set(contractRecord('short', placeC), SHORT_TTL_MS);
        await pause(SHORT_TTL_MS + slack);

        expect(await store.invalidate({ server: placeC.server }, null)).toBe(1);
      });

      it('lets the place be cached again afterwards', async () => {
        await store.invalidate({ server: placeA.server }, null);

        expect(await store.set(contractRecord('a1', placeA), LONG_TTL_MS)).toBe(true);
        expect(await store.get('a1')).toBeDefined();
      });
    });

    describe('size, recent, usage and clear', () => {
      it('lists what the statistics show of an entry: key, query, execution time, caching time, hits', async () => {
        const entry = contractRecord('listed');
        await store.set(entry, LONG_TTL_MS);
        await store.get('listed');

        expect((await store.recent(1))[0]).toMatchObject({
          key: 'listed',
          query: entry.query,
          executionTime: entry.executionTime,
          cachedAt: entry.cachedAt,
          hits: 1,
        });
      });

      it('lists the most recently cached entries first, up to the limit', async () => {
        for (const key of ['a', 'b', 'c', 'd']) await store.set(contractRecord(key), LONG_TTL_MS);

        expect(keysOf(await store.recent(3))).toEqual(['d', 'c', 'b']);
        expect(keysOf(await store.recent(10))).toEqual(['d', 'c', 'b', 'a']);
        expect(await store.recent(0)).toEqual([]);
      });

      it('orders by caching, not by use, and moves an entry cached again to the top', async () => {
        for (const key of ['a', 'b', 'c']) await store.set(contractRecord(key), LONG_TTL_MS);
        await store.get('a');
        expect(keysOf(await store.recent(10))).toEqual(['c', 'b', 'a']);

        await store.set(contractRecord('a'), LONG_TTL_MS);
        expect(keysOf(await store.recent(10))).toEqual(['a', 'c', 'b']);
      });

      it('skips entries that are gone, and still fills the limit', async () => {
        for (const key of ['a', 'b']) await store.set(contractRecord(key, placeB), LONG_TTL_MS);
        for (const key of ['c', 'd']) await store.set(contractRecord(key, placeA), LONG_TTL_MS);
        await store.invalidate({ scope: placeA.scope }, null);

        expect(keysOf(await store.recent(2))).toEqual(['b', 'a']);
      });

      it('counts live entries and empties on clear, staying usable', async () => {
        await store.set(contractRecord('a', placeA), LONG_TTL_MS);
        await store.set(contractRecord('b', placeC), LONG_TTL_MS);
        expect(await store.size()).toBe(2);

        await store.clear();

        expect(await store.size()).toBe(0);
        expect(await store.get('a')).toBeUndefined();
        expect(await store.recent(10)).toEqual([]);
        expect(await store.set(contractRecord('a'), LONG_TTL_MS)).toBe(true);
        expect(await store.size()).toBe(1);
      });

      it('reports usage: live entries and their bytes, when it reports it', async () => {
        if (!store.usage) return;
        await store.set(contractRecord('a', placeA, { sizeBytes: 300 }), LONG_TTL_MS);
        await store.set(contractRecord('b', placeB, { sizeBytes: 500 }), LONG_TTL_MS);
        await store.set(contractRecord('b', placeB, { sizeBytes: 200 }), LONG_TTL_MS);
        const usage = await store.usage();
        expect(usage.entries).toBe(2);
        expect(usage.evictions).toBe(0);
        // A store may not count bytes (0); one that does counts each live entry once.
        if (usage.bytes !== 0) expect(usage.bytes).toBe(500);

        await store.invalidate({ scope: placeA.scope }, null);
        const after = await store.usage();
        expect(after.entries).toBe(1);
        if (after.bytes !== 0) expect(after.bytes).toBe(200);
      });
    });
  });
}
