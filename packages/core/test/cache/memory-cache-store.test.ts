import { MemoryCacheStore } from '../../src/cache';
import { ManualClock, record } from './fixtures';

const keysOf = (records: { key: string }[]) => records.map((each) => each.key);

describe('MemoryCacheStore', () => {
  describe('get and set', () => {
    it('returns a stored entry and counts a hit on each get', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a'), 1000);

      expect((await store.get('a'))?.hits).toBe(1);
      expect((await store.get('a'))?.hits).toBe(2);
      expect((await store.recent(1))[0]?.hits).toBe(2);
    });

    it('returns undefined for an absent key', async () => {
      expect(await new MemoryCacheStore().get('absent')).toBeUndefined();
    });

    it('keeps its own copy: the caller’s objects are never changed by hits', async () => {
      const store = new MemoryCacheStore();
      const entry = record('a');
      await store.set(entry, 1000);

      const served = await store.get('a');
      if (served) served.hits = 99;

      expect(entry.hits).toBe(0);
      expect((await store.get('a'))?.hits).toBe(2);
    });

    it('replaces an entry stored again under the same key', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a', { executionTime: 1 }), 1000);
      await store.get('a');
      await store.set(record('a', { executionTime: 2 }), 1000);

      expect(await store.size()).toBe(1);
      expect(await store.get('a')).toMatchObject({ executionTime: 2, hits: 1 });
    });

    it('does not keep an entry with a TTL that is not positive, and drops the older one', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a'), 1000);
      await store.set(record('a'), 0);

      expect(await store.get('a')).toBeUndefined();
      expect(await store.size()).toBe(0);
    });
  });

  describe('expiry', () => {
    it('stops serving an entry once its TTL has passed', async () => {
      const clock = new ManualClock();
      const store = new MemoryCacheStore({ clock });
      await store.set(record('a'), 100);

      clock.advance(100);
      expect(await store.get('a')).toBeDefined();
      clock.advance(1);
      expect(await store.get('a')).toBeUndefined();
    });

    it('counts expiry from caching, not from the last hit', async () => {
      const clock = new ManualClock();
      const store = new MemoryCacheStore({ clock });
      await store.set(record('a'), 100);

      clock.advance(60);
      await store.get('a');
      clock.advance(60);

      expect(await store.get('a')).toBeUndefined();
    });

    it('gives each entry its own TTL', async () => {
      const clock = new ManualClock();
      const store = new MemoryCacheStore({ clock });
      await store.set(record('short'), 10);
      await store.set(record('long'), 1000);

      clock.advance(50);

      expect(await store.get('short')).toBeUndefined();
      expect(await store.get('long')).toBeDefined();
    });

    it('leaves expired entries out of size and recent', async () => {
      const clock = new ManualClock();
      const store = new MemoryCacheStore({ clock });
      await store.set(record('old'), 10);
      await store.set(record('fresh'), 1000);

      clock.advance(50);

      expect(await store.size()).toBe(1);
      expect(keysOf(await store.recent(10))).toEqual(['fresh']);
    });

    it('keeps following the clock after counting live entries', async () => {
      const clock = new ManualClock();
      const store = new MemoryCacheStore({ clock });
      await store.set(record('a'), 10);

      expect(await store.size()).toBe(1);
      clock.advance(11);

      expect(await store.get('a')).toBeUndefined();
    });

    it('works with a clock whose origin is 0', async () => {
      const clock = new ManualClock(0);
      const store = new MemoryCacheStore({ clock });
      await store.set(record('a'), 10);

      clock.advance(11);

      expect(await store.get('a')).toBeUndefined();
    });

    it('expires on the real clock too', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a'), 20);

      await new Promise((resolve) => setTimeout(resolve, 40));

      expect(await store.get('a')).toBeUndefined();
    });
  });

  describe('bounds', () => {
    it('evicts the least recently used entry beyond maxEntries', async () => {
      const store = new MemoryCacheStore({ maxEntries: 2 });
      await store.set(record('a'), 1000);
      await store.set(record('b'), 1000);
      await store.get('a'); // b is now the least recently used
      await store.set(record('c'), 1000);

      expect(await store.get('b')).toBeUndefined();
      expect(await store.get('a')).toBeDefined();
      expect(await store.get('c')).toBeDefined();
      expect(await store.size()).toBe(2);
    });

    it('evicts least recently used entries to stay within maxBytes', async () => {
      const store = new MemoryCacheStore({ maxBytes: 100 });
      await store.set(record('a', { sizeBytes: 40 }), 1000);
      await store.set(record('b', { sizeBytes: 40 }), 1000);
      await store.set(record('c', { sizeBytes: 40 }), 1000);

      expect(await store.get('a')).toBeUndefined();
      expect(keysOf(await store.recent(10))).toEqual(['c', 'b']);
    });

    it('does not keep an entry larger than maxBytes, and drops the older one under its key', async () => {
      const store = new MemoryCacheStore({ maxBytes: 100 });
      await store.set(record('a', { sizeBytes: 10 }), 1000);
      await store.set(record('a', { sizeBytes: 101 }), 1000);

      expect(await store.get('a')).toBeUndefined();
      expect(await store.recent(10)).toEqual([]);
    });

    it('rejects bounds that are not positive integers', () => {
      expect(() => new MemoryCacheStore({ maxEntries: 0 })).toThrow(RangeError);
      expect(() => new MemoryCacheStore({ maxBytes: 1.5 })).toThrow(RangeError);
    });
  });

  describe('recent', () => {
    it('lists the most recently cached entries first, up to the limit', async () => {
      const store = new MemoryCacheStore();
      for (const key of ['a', 'b', 'c', 'd']) await store.set(record(key), 1000);

      expect(keysOf(await store.recent(3))).toEqual(['d', 'c', 'b']);
      expect(keysOf(await store.recent(10))).toEqual(['d', 'c', 'b', 'a']);
      expect(await store.recent(0)).toEqual([]);
    });

    it('orders by caching, not by use: a hit does not move an entry up', async () => {
      const store = new MemoryCacheStore();
      for (const key of ['a', 'b', 'c']) await store.set(record(key), 1000);
      await store.get('a');

      expect(keysOf(await store.recent(3))).toEqual(['c', 'b', 'a']);
    });

    it('moves an entry cached again to the top', async () => {
      const store = new MemoryCacheStore();
      for (const key of ['a', 'b', 'c']) await store.set(record(key), 1000);
      await store.set(record('a'), 1000);

      expect(keysOf(await store.recent(3))).toEqual(['a', 'c', 'b']);
    });

    it('does not count as a use: reading the statistics leaves the LRU order alone', async () => {
      const store = new MemoryCacheStore({ maxEntries: 2 });
      await store.set(record('a'), 1000);
      await store.set(record('b'), 1000);
      await store.recent(2);
      await store.set(record('c'), 1000);

      expect(keysOf(await store.recent(2))).toEqual(['c', 'b']);
    });

    it('forgets evicted entries', async () => {
      const store = new MemoryCacheStore({ maxEntries: 2 });
      for (const key of ['a', 'b', 'c']) await store.set(record(key), 1000);

      expect(keysOf(await store.recent(10))).toEqual(['c', 'b']);
    });
  });

  describe('invalidate', () => {
    async function storeWith(...records: ReturnType<typeof record>[]) {
      const store = new MemoryCacheStore();
      for (const each of records) await store.set(each, 1000);
      return store;
    }

    it('removes entries of the scope that read a written relation', async () => {
      const store = await storeWith(
        record('t', { reads: ['t'] }),
        record('u', { reads: ['u'] }),
        record('tu', { reads: ['u', 't'] }),
      );

      expect(await store.invalidate({ scope: 'scope-a' }, ['t'])).toBe(2);
      expect(keysOf(await store.recent(10))).toEqual(['u']);
    });

    it('leaves other scopes untouched', async () => {
      const store = await storeWith(
        record('mine', { reads: ['t'] }),
        record('theirs', { scope: 'scope-b', reads: ['t'] }),
      );

      expect(await store.invalidate({ scope: 'scope-a' }, ['t'])).toBe(1);
      expect(await store.get('theirs')).toBeDefined();
    });

    it('removes every entry of the scope when the written relations are unknown', async () => {
      const store = await storeWith(
        record('t', { reads: ['t'] }),
        record('none', { reads: [] }),
        record('theirs', { scope: 'scope-b' }),
      );

      expect(await store.invalidate({ scope: 'scope-a' }, null)).toBe(2);
      expect(keysOf(await store.recent(10))).toEqual(['theirs']);
    });

    it('removes every database of a server when asked by server', async () => {
      const store = await storeWith(
        record('a', { scope: 'server-a/db1' }),
        record('b', { scope: 'server-a/db2' }),
        record('elsewhere', { scope: 'server-b/db1', server: 'server-b' }),
      );

      expect(await store.invalidate({ server: 'server-a' }, null)).toBe(2);
      expect(keysOf(await store.recent(10))).toEqual(['elsewhere']);
    });

    it('removes entries whose reads are unknown on any write to their scope', async () => {
      const store = await storeWith(
        record('unknown', { reads: null }),
        record('u', { reads: ['u'] }),
      );

      expect(await store.invalidate({ scope: 'scope-a' }, ['t'])).toBe(1);
      expect(await store.get('unknown')).toBeUndefined();
      expect(await store.get('u')).toBeDefined();
    });

    it('treats public.t and t as the same relation, both ways', async () => {
      const readsBare = await storeWith(record('bare', { reads: ['t'] }));
      const readsQualified = await storeWith(record('qualified', { reads: ['public.t'] }));

      expect(await readsBare.invalidate({ scope: 'scope-a' }, ['public.t'])).toBe(1);
      expect(await readsQualified.invalidate({ scope: 'scope-a' }, ['t'])).toBe(1);
    });

    it('matches a schema-qualified name with the bare name, since the search_path is unknown', async () => {
      const store = await storeWith(
        record('bare', { reads: ['orders'] }),
        record('qualified', { reads: ['sales.orders'] }),
      );

      expect(await store.invalidate({ scope: 'scope-a' }, ['sales.orders'])).toBe(2);
    });

    it('compares names case-sensitively, as the parser gives them', async () => {
      const store = await storeWith(record('quoted', { reads: ['Orders'] }));

      expect(await store.invalidate({ scope: 'scope-a' }, ['orders'])).toBe(0);
      expect(await store.invalidate({ scope: 'scope-a' }, ['Orders'])).toBe(1);
    });

    it('keeps entries that read nothing when known relations are written', async () => {
      const store = await storeWith(record('constant', { reads: [] }));

      expect(await store.invalidate({ scope: 'scope-a' }, ['t'])).toBe(0);
    });
  });

  describe('clear, size and close', () => {
    it('counts live entries and empties on clear', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a'), 1000);
      await store.set(record('b'), 1000);

      expect(await store.size()).toBe(2);
      await store.clear();
      expect(await store.size()).toBe(0);
      expect(await store.get('a')).toBeUndefined();
      expect(await store.recent(10)).toEqual([]);
    });

    it('is usable again after clear', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a'), 1000);
      await store.clear();
      await store.set(record('b'), 1000);

      expect(keysOf(await store.recent(10))).toEqual(['b']);
    });

    it('empties on close', async () => {
      const store = new MemoryCacheStore();
      await store.set(record('a'), 1000);
      await store.close();
      expect(await store.size()).toBe(0);
    });
  });

  describe('process lifetime', () => {
    afterEach(() => jest.restoreAllMocks());

    it('starts no timer, so entries never keep the process alive', async () => {
      const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
      const setIntervalSpy = jest.spyOn(globalThis, 'setInterval');
      const timersBefore = process
        .getActiveResourcesInfo()
        .filter((kind) => kind === 'Timeout').length;

      const store = new MemoryCacheStore({ maxEntries: 3 });
      for (const key of ['a', 'b', 'c', 'd']) await store.set(record(key), 60_000);
      await store.get('b');
      await store.get('a');
      await store.invalidate({ scope: 'scope-a' }, ['t']);
      await store.set(record('e'), 60_000);
      await store.size();
      await store.recent(10);

      expect(setTimeoutSpy).not.toHaveBeenCalled();
      expect(setIntervalSpy).not.toHaveBeenCalled();
      expect(process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout')).toHaveLength(
        timersBefore,
      );
    });
  });
});
