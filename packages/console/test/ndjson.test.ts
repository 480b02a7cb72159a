import fc from 'fast-check';
import { NdjsonLines, splitJsonArray } from '../src/browser/ndjson';

describe('NdjsonLines', () => {
  it('joins lines cut across chunks and keeps an unfinished line apart', () => {
    const lines = new NdjsonLines();
    expect(lines.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(lines.push(':2}\n\n{"c":')).toEqual(['{"b":2}']);
    expect(lines.rest()).toBe('{"c":');
  });

  it('gives the same lines however the stream is cut (seeded)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (values, cuts) => {
          const text = values.map((value) => `${JSON.stringify({ row: value })}\n`).join('');
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort(
            (a, b) => a - b,
          );
          const lines = new NdjsonLines();
          const seen: string[] = [];
          let from = 0;
          for (const point of [...points, text.length]) {
            seen.push(...lines.push(text.slice(from, point)));
            from = point;
          }
          expect(seen.map((line) => JSON.parse(line))).toEqual(
            JSON.parse(`[${text.trim().split('\n').join(',')}]`),
          );
          expect(seen).toHaveLength(values.length);
          expect(lines.rest()).toBe('');
        },
      ),
      { seed: 7, numRuns: 500 },
    );
  });
});

describe('splitJsonArray', () => {
  it('keeps each element’s text as written: digits, key order, duplicate keys', () => {
    const line = '{"row":[1,{"a":12345678901234567890,"a":1.10},"x,]\\"y",null,[1,[2]]]}';
    expect(splitJsonArray(line, line.indexOf('['))).toEqual([
      '1',
      '{"a":12345678901234567890,"a":1.10}',
      '"x,]\\"y"',
      'null',
      '[1,[2]]',
    ]);
  });

  it('splits any JSON array into elements that parse to its values (seeded)', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), (values) => {
        const text = JSON.stringify(values);
        expect(splitJsonArray(text, 0).map((element) => JSON.parse(element))).toEqual(
          JSON.parse(text),
        );
      }),
      { seed: 11, numRuns: 1000 },
    );
  });

  it('keeps the spaces PostgreSQL left around a json value', () => {
    expect(splitJsonArray('[1, { "a" :  1 } ,null]', 0)).toEqual(['1', ' { "a" :  1 } ', 'null']);
  });

  it('refuses a text that is not an array or never ends', () => {
    expect(() => splitJsonArray('{"row":1}', 0)).toThrow('Not a JSON array');
    expect(() => splitJsonArray('[1,2', 0)).toThrow('Unterminated');
  });
});
