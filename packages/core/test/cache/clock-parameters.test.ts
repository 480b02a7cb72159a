/**
 * docs/decisions.md 10.36: a read whose parameter hands date/time input a clock word is neither
 * kept nor served. The types come from PostgreSQL (ParameterDescription, as the adapter reports
 * them); what the real server does with them is in apps/http-express/test/cache-clock.test.ts.
 */
import { MemoryCacheStore, ResultCache } from '../../src/cache';
import { readsClockThroughParameters } from '../../src/cache/cacheability';
import type { CacheScope } from '../../src/ports/connections';
import { readStatement, selectResult } from './fixtures';

const TIMESTAMPTZ = 1184;
const TIMESTAMPTZ_ARRAY = 1185;
const TSTZRANGE = 3910;
const TIMETZ = 1266;
const TEXT = 25;
const INT4 = 23;
const A_USER_TYPE = 16_400;

const read = readStatement('SELECT $1');
const castingRead = readStatement('SELECT $1 || $2, $1::date', { castsParameterToClockType: true });

describe('readsClockThroughParameters', () => {
  it.each<[string, unknown[], number[] | undefined]>([
    ["'now' for a timestamptz", ['now'], [TIMESTAMPTZ]],
    ["' Today ' for a timestamptz", [' Today '], [TIMESTAMPTZ]],
    ["'tomorrow 10:00'", ['tomorrow 10:00'], [TIMESTAMPTZ]],
    ['an array element', [['2024-01-01', 'yesterday']], [TIMESTAMPTZ_ARRAY]],
    ['a range bound', ['[now,)'], [TSTZRANGE]],
    ['an escaped array element', ['{n\\ow}'], [TIMESTAMPTZ_ARRAY]],
    ["a user's type (a domain over date, say)", ['today'], [A_USER_TYPE]],
    ['an object sent as JSON to a type of a user', [{ at: 'now' }], [A_USER_TYPE]],
    ['any timetz', ['10:00'], [TIMETZ]],
    ['types not described', ['now'], undefined],
    ['fewer types described than parameters', [1, 'now'], [INT4]],
  ])('is true for %s', (_name, params, types) => {
    expect(readsClockThroughParameters(read, params, types)).toBe(true);
  });

  it.each<[string, unknown[], number[] | undefined]>([
    ['an ISO timestamp', ['2024-01-01 12:00:00+00'], [TIMESTAMPTZ]],
    ["'now' for a text parameter", ['now'], [TEXT]],
    ['a number and null for date/time parameters', [20240101, null], [TIMESTAMPTZ, TIMESTAMPTZ]],
    ['a word that merely holds a clock word', ['snowfall'], [TIMESTAMPTZ]],
    ['no parameters', [], []],
    ['a null timetz', [null], [TIMETZ]],
  ])('is false for %s', (_name, params, types) => {
    expect(readsClockThroughParameters(read, params, types)).toBe(false);
  });

  it('counts a text parameter that the statement casts to a date/time type', () => {
    expect(readsClockThroughParameters(castingRead, ['now', 'x'], [TEXT, TEXT])).toBe(true);
    expect(readsClockThroughParameters(castingRead, ['2024-01-01', 'x'], [TEXT, TEXT])).toBe(false);
  });
});

describe('ResultCache.store', () => {
  const scope: CacheScope = { server: 's', database: 's/db', credentials: 'alice' };

  it("keeps no result whose timestamptz parameter was 'now', and keeps an ISO one", async () => {
    const cache = new ResultCache({
      store: new MemoryCacheStore(),
      defaultTtlMs: 60_000,
      maxEntryBytes: 1024 * 1024,
      enabledByDefault: true,
    });
    const statement = readStatement('SELECT $1::timestamptz');
    const store = async (value: string) => {
      const params = [value];
      const key = cache.keyFor(scope, statement, { rowMode: 'object', maxRows: 10, params });
      const result = { ...selectResult(), parameterTypes: [TIMESTAMPTZ] };
      const verdict = await cache.store({
        key,
        scope,
        statement,
        params,
        result,
        executionTime: 1,
      });
      return { verdict, found: await cache.lookup(key) };
    };

    expect(await store('now')).toEqual({ verdict: 'not-cacheable', found: undefined });
    const iso = await store('2024-01-01');
    expect(iso.verdict).toBe('stored');
    expect(iso.found).toBeDefined();
  });
});
