/**
 * A worker's coherent store (docs/decisions.md 10.28) over a fake link to the primary: the order
 * of local and relayed work, and the marks that refuse results of reads older than a write.
 */
import { MemoryCacheStore, type CacheEntryRecord } from '@sqlgate/core';
import { CoherentMemoryStore } from '../../src/cluster/coherent-memory-store';
import type { PrimaryLink } from '../../src/cluster/worker-channel';

function entry(key: string, scope = 'db1'): CacheEntryRecord {
  return {
    key,
    scope,
    server: 'server1',
    query: `SELECT ${key}`,
    reads: ['t'],
    result: { rows: [{ v: 1 }], fields: [], rowCount: 1, command: 'SELECT', truncated: false },
    sizeBytes: 20,
    executionTime: 1.5,
    cachedAt: new Date('2024-01-01T00:00:00Z'),
    freshMs: 60_000,
    hits: 0,
  };
}

interface Call {
  type: string;
  payload: unknown;
  answer(result: unknown): void;
  fail(error: Error): void;
}

/** A link whose requests wait until the test answers them. */
function fakePrimary(): { link: PrimaryLink; calls: Call[] } {
  const calls: Call[] = [];
  const link = {
    request: (type: string, payload: unknown) =>
      new Promise((resolve, reject) =>
        calls.push({ type, payload, answer: resolve, fail: reject }),
      ),
    notify: async () => undefined,
  } as unknown as PrimaryLink;
  return { link, calls };
}

const place = { scope: 'db1', server: 'server1' };

describe('CoherentMemoryStore', () => {
  it('invalidates locally first, and resolves only once the primary confirms the relay', async () => {
    const { link, calls } = fakePrimary();
    const store = new CoherentMemoryStore(new MemoryCacheStore(), link);
    await store.set(entry('a'), 60_000);
    let resolved = false;
    const invalidation = store.invalidate({ scope: 'db1' }, null).then((removed) => {
      resolved = true;
      return removed;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.get('a')).toBeUndefined();
    expect(calls.map((call) => [call.type, call.payload])).toEqual([
      ['invalidate', { where: { scope: 'db1' }, relations: null }],
    ]);
    expect(resolved).toBe(false);
    calls[0]?.answer({});
    await expect(invalidation).resolves.toBe(1);
  });

  it('refuses the result of a read marked before a relayed invalidation', async () => {
    const { link } = fakePrimary();
    const store = new CoherentMemoryStore(new MemoryCacheStore(), link);
    const before = await store.mark(place);
    await store.applyInvalidation({ scope: 'db1' }, null);
    await expect(store.set(entry('a'), 60_000, before)).resolves.toBe(false);
    const after = await store.mark(place);
    await expect(store.set(entry('a'), 60_000, after)).resolves.toBe(true);
    // Another database's invalidation does not concern it.
    const marked = await store.mark(place);
    await store.applyInvalidation({ scope: 'db2' }, null);
    await expect(store.set(entry('b'), 60_000, marked)).resolves.toBe(true);
  });

  it('forgets everything, refusing every read marked before', async () => {
    const { link } = fakePrimary();
    const store = new CoherentMemoryStore(new MemoryCacheStore(), link);
    await store.set(entry('a'), 60_000);
    const before = await store.mark(place);
    await store.forgetAll();
    expect(await store.localSize()).toBe(0);
    await expect(store.set(entry('b', 'db9'), 60_000, before)).resolves.toBe(false);
    await expect(store.set(entry('b', 'db9'), 60_000, await store.mark(place))).resolves.toBe(true);
    await expect(store.set(entry('c'), 60_000, 'not a mark')).resolves.toBe(false);
  });

  it('rejects, and says so, when the primary does not confirm', async () => {
    const { link, calls } = fakePrimary();
    const unconfirmed: string[] = [];
    const store = new CoherentMemoryStore(new MemoryCacheStore(), link, (what) =>
      unconfirmed.push(what),
    );
    const invalidation = store.invalidate({ server: 'server1' }, null);
    await new Promise((resolve) => setImmediate(resolve));
    calls[0]?.fail(new Error('invalidate: no answer in 5000 ms'));
    await expect(invalidation).rejects.toThrow('no answer');
    expect(unconfirmed).toEqual(['invalidation']);
  });

  it('clears every worker: itself first, then the others through the primary', async () => {
    const { link, calls } = fakePrimary();
    const store = new CoherentMemoryStore(new MemoryCacheStore(), link);
    await store.set(entry('a'), 60_000);
    const cleared = store.clear();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.localSize()).toBe(0);
    expect(calls.map((call) => call.type)).toEqual(['clearCaches']);
    calls[0]?.answer({});
    await expect(cleared).resolves.toBeUndefined();
  });

  it('reads size and recent entries of all workers from the primary, its own locally for it', async () => {
    const { link, calls } = fakePrimary();
    const store = new CoherentMemoryStore(new MemoryCacheStore(), link);
    await store.set(entry('a'), 60_000);
    const size = store.size();
    const recent = store.recent(10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.map((call) => [call.type, call.payload])).toEqual([
      ['cacheSize', {}],
      ['recentEntries', { limit: 10 }],
    ]);
    calls[0]?.answer({ entries: 5 });
    const [summary] = await store.localRecent(10);
    calls[1]?.answer({ entries: [summary] });
    await expect(size).resolves.toBe(5);
    const [record] = await recent;
    expect(record?.query).toBe('SELECT a');
    expect(record?.cachedAt.toISOString()).toBe('2024-01-01T00:00:00.000Z');
    // The rows stay in their worker: only what the statistics show travels.
    expect(Object.keys(summary ?? {}).sort()).toEqual([
      'cachedAtMs',
      'executionTime',
      'hits',
      'key',
      'query',
    ]);
    expect(await store.localSize()).toBe(1);
    expect((await store.usage()).entries).toBe(1);
  });
});
