/** The check that guards spliced json text (docs/decisions.md 10.13). */
import fc from 'fast-check';
import { isJsonText } from '../../src/json';

it.each([
  '0',
  '-0',
  '1.10',
  '12345678901234567890123',
  '1e400',
  '-1.5E-3',
  '"a\\"b\\u00e9\\n"',
  'true',
  'null',
  '[]',
  '{}',
  ' [1, [2, {"a": [3]}], "x"] ',
  '{"a": 1, "a": 2, "2": 3}',
  '['.repeat(6000) + ']'.repeat(6000),
])('accepts %s', (text) => {
  expect(isJsonText(text)).toBe(true);
});

it.each([
  '',
  ' ',
  '1}],"forged":true,"rows":[{"j":"x"',
  '{"a":',
  '{"a" 1}',
  '{a: 1}',
  '[1,]',
  '[1 2]',
  '01',
  '1.',
  '.5',
  '+1',
  '1e',
  '"unterminated',
  '"bad \\x escape"',
  '"raw \u0001 control"',
  'tru',
  'nul',
  '[}',
  '{]',
  '1 2',
  '"a" "b"',
  'NaN',
])('refuses %s', (text) => {
  expect(isJsonText(text)).toBe(false);
});

it('agrees with JSON.parse on generated JSON and on broken variants of it', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.nat(), (value, cut) => {
      const text = JSON.stringify(value);
      expect(isJsonText(text)).toBe(true);
      const broken = text.slice(0, cut % (text.length + 1));
      let parses = true;
      try {
        JSON.parse(broken);
      } catch {
        parses = false;
      }
      expect(isJsonText(broken)).toBe(parses);
    }),
    { seed: 20261123, numRuns: 2000 },
  );
});
