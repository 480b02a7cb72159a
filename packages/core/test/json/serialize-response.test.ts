import fc from 'fast-check';
import { MemoryCacheStore, ResultCache } from '../../src/cache';
import { RawJson, parseRawJson, serializeResponse } from '../../src/json';
import { PLACEHOLDER } from '../../src/json/splice-state';
import { readStatement, selectResult } from '../cache/fixtures';

describe('serializeResponse', () => {
  it('writes what JSON.stringify writes when no RawJson is present', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(serializeResponse(value)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('splices RawJson text verbatim: big numbers, trailing zeros, duplicate keys, key order', () => {
    const body = {
      rows: [
        {
          big: new RawJson('12345678901234567890123'),
          exact: new RawJson('1.10'),
          keys: new RawJson('{"b": 1, "a": 2, "b": 3, "2": 0, "1": 0}'),
          text: 'plain',
        },
      ],
    };
    expect(serializeResponse(body)).toBe(
      '{"rows":[{"big":12345678901234567890123,"exact":1.10,"keys":{"b": 1, "a": 2, "b": 3, "2": 0, "1": 0},"text":"plain"}]}',
    );
  });

  it('keeps each text at its own place among many (placeholder 1 is not placeholder 10)', () => {
    const values = Array.from({ length: 25 }, (_, i) => new RawJson(`[${i}]`));
    expect(serializeResponse({ values, nested: [[values[3]], { x: values[11] }] })).toBe(
      JSON.stringify({
        values: values.map((_, i) => [i]),
        nested: [[[3]], { x: [11] }],
      }),
    );
  });

  it('splices in array rows, nested arrays and at the top level', () => {
    expect(serializeResponse([[new RawJson('-0'), null, [new RawJson('{"a":1e400}')]]])).toBe(
      '[[-0,null,[{"a":1e400}]]]',
    );
    expect(serializeResponse(new RawJson('"x"'))).toBe('"x"');
  });

  it('leaves strings alone that only resemble a placeholder', () => {
    const value = { a: 'raw-json-0:0', b: new RawJson('1'), c: '"raw-json-:1"' };
    expect(JSON.parse(serializeResponse(value))).toEqual({
      a: 'raw-json-0:0',
      b: 1,
      c: '"raw-json-:1"',
    });
  });

  it('never puts a text in the wrong place, even for a string that is the placeholder itself', () => {
    const value = { a: PLACEHOLDER, b: new RawJson('[1.10]'), c: [PLACEHOLDER] };
    expect(JSON.parse(serializeResponse(value))).toEqual({
      a: PLACEHOLDER,
      b: [1.1],
      c: [PLACEHOLDER],
    });
  });

  it('round-trips any JSON text held raw, wherever it sits', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (outer, inner) => {
        const text = JSON.stringify(inner, null, 1);
        const written = serializeResponse({
          outer,
          inner: new RawJson(text),
          list: [new RawJson(text)],
        });
        expect(written).toContain(text);
        expect(JSON.parse(written)).toEqual(
          JSON.parse(JSON.stringify({ outer, inner, list: [inner] })),
        );
      }),
    );
  });

  it('gives `null` for undefined, as a response body never is', () => {
    expect(serializeResponse(undefined)).toBe('null');
  });

  it('stays correct after a serialisation that threw', () => {
    const circular: Record<string, unknown> = { v: new RawJson('1') };
    circular.self = circular;
    expect(() => serializeResponse(circular)).toThrow();
    expect(JSON.stringify({ v: new RawJson('[1, 2]') })).toBe('{"v":[1,2]}');
    expect(serializeResponse({ v: new RawJson('[1, 2]') })).toBe('{"v":[1, 2]}');
  });

  it('is a 6000-deep value without recursion (no stack overflow)', () => {
    const deep = '['.repeat(6000) + ']'.repeat(6000);
    expect(serializeResponse({ v: new RawJson(deep) })).toBe(`{"v":${deep}}`);
  });
});

describe('RawJson outside serializeResponse', () => {
  it('stringifies as its parsed value with plain JSON.stringify', () => {
    expect(JSON.stringify({ v: new RawJson('{"a": [1, 2.50]}') })).toBe('{"v":{"a":[1,2.5]}}');
  });

  it('parseRawJson replaces RawJson values, inside arrays too, and keeps other values', () => {
    const row = [new RawJson('{"a": 1}'), 'x', [new RawJson('[2]'), null], 3];
    expect(parseRawJson(row)).toEqual([{ a: 1 }, 'x', [[2], null], 3]);
    expect(Object.is(parseRawJson(new RawJson('-0')), -0)).toBe(true);
    const plain = ['a', [1, 2]];
    expect(parseRawJson(plain)).toBe(plain);
  });
});

describe('the result cache with RawJson values', () => {
  it('keeps RawJson values and sizes the entry by the text the response writes', async () => {
    const cache = new ResultCache({
      store: new MemoryCacheStore(),
      defaultTtlMs: 60_000,
      maxEntryBytes: 1024 * 1024,
      enabledByDefault: true,
    });
    const statement = readStatement('SELECT v FROM t', { relations: { reads: ['t'], writes: [] } });
    const scope = { server: 's:5432', database: 's:5432/db', credentials: 'user/hmac' };
    const key = cache.keyFor(scope, statement, { rowMode: 'object', maxRows: 10 });
    const value = new RawJson('{"n": 12345678901234567890123, "pad": "' + 'x'.repeat(100) + '"}');
    const result = selectResult([{ v: value }]);
    await cache.store({ key, scope, statement, result, executionTime: 1 });
    const record = (await cache.lookup(key))?.record;
    expect(record?.result.rows[0]).toEqual({ v: value });
    expect((record?.result.rows[0] as { v: unknown }).v).toBeInstanceOf(RawJson);
    expect(serializeResponse(record?.result.rows)).toBe(`[{"v":${value.text}}]`);
    expect(record?.sizeBytes).toBe(Buffer.byteLength(serializeResponse(record?.result)));
    expect(record?.sizeBytes).toBeGreaterThan(value.text.length);
  });
});
