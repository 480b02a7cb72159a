/** docs/decisions.md 10.3 and 10.14: the type rules, and that no parser the registry hands out throws. */
import fc from 'fast-check';
import { RawJson, serializeResponse } from '@sqlgate/core';
import { BUILTIN_TYPE_NAMES } from '../src/types/builtin-types';
import { TypeRegistry } from '../src/types/type-registry';

const registry = new TypeRegistry();
const parse = (oid: number, text: string): unknown => registry.parserFor(oid)(text);

describe('every parser the registry hands out', () => {
  const customArray = 900_001;
  const customOfCustom = 900_002;
  const garbageRegistry = new TypeRegistry();
  garbageRegistry.remember(
    new Map([
      [customArray, { name: '_thing', elementOid: 3802 }],
      [customOfCustom, { name: '__thing', elementOid: customArray, delimiter: ';' }],
    ]),
  );
  // Every built-in type, so every built-in parser (each is keyed by a built-in type's oid).
  const oids = [...BUILTIN_TYPE_NAMES.keys()].concat(customArray, customOfCustom);
  const garbage = [
    '',
    '{',
    '}',
    '{"',
    '{"a\\',
    '{{1,2}',
    '{1,2}}',
    '[2:3]={1,2}',
    '[',
    '{a,{b}}x',
    'NULL',
    '\\',
    '1 x',
    ' 1',
    '{,}',
    '{1,,2}',
    '{"a"b}',
    'x'.repeat(10_000),
    '{'.repeat(5_000),
  ];

  it.each(oids)('type %i returns a value or the text for garbage, never throws', (oid) => {
    const parser = garbageRegistry.parserFor(oid);
    for (const text of garbage) expect(() => parser(text)).not.toThrow();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const value = parser(text);
        // Whatever came back can be serialised.
        expect(() => serializeResponse(value)).not.toThrow();
      }),
      { numRuns: 60 },
    );
  });

  it('gives back the very text when the rule cannot convert it', () => {
    for (const [oid, text] of [
      [1007, '{1,2'],
      [1007, '[2:3]={1,2}'],
      [22, '1 x'],
      [30, '{1}'],
      [23, 'abc'],
      [16, 'maybe'],
      [701, 'nonsense'],
      [1020, '{(1,1),(0,0),(2,2),(1,1)'],
    ] as const)
      expect(parse(oid, text)).toBe(text);
  });
});

describe('array rules (docs/decisions.md 10.14)', () => {
  it('splits box arrays at `;`, the box delimiter, keeping the commas inside each box', () => {
    expect(parse(1020, '{(1,1),(0,0);(2,2),(1,1)}')).toEqual(['(1,1),(0,0)', '(2,2),(1,1)']);
    expect(parse(1020, '{}')).toEqual([]);
    expect(parse(1020, '{NULL;(1,1),(0,0)}')).toEqual([null, '(1,1),(0,0)']);
  });

  it('leaves arrays with lower bounds other than 1 as PostgreSQL prints them', () => {
    expect(parse(1007, '[2:3]={1,2}')).toBe('[2:3]={1,2}');
    expect(parse(1009, '[0:1][1:1]={{a},{b}}')).toBe('[0:1][1:1]={{a},{b}}');
  });

  it('reads quoted elements, escapes, NULL and the string "NULL"', () => {
    expect(parse(1009, '{"a b",NULL,"NULL","c,\\"d","back\\\\slash","","{}",é}')).toEqual([
      'a b',
      null,
      'NULL',
      'c,"d',
      'back\\slash',
      '',
      '{}',
      'é',
    ]);
  });

  it('reads nested arrays and typed elements', () => {
    expect(parse(1007, '{{1,2},{3,NULL}}')).toEqual([
      [1, 2],
      [3, null],
    ]);
    expect(parse(1000, '{t,f,NULL}')).toEqual([true, false, null]);
    expect(parse(1021, '{1.5,NaN,-Infinity}')).toEqual([1.5, 'NaN', '-Infinity']);
    expect(parse(1016, '{9223372036854775807}')).toEqual(['9223372036854775807']);
  });

  it('makes int2vector and oidvector arrays of numbers, and their arrays nested arrays', () => {
    expect(parse(22, '1 2')).toEqual([1, 2]);
    expect(parse(22, '')).toEqual([]);
    expect(parse(30, '23 25 4294967295')).toEqual([23, 25, 4294967295]);
    expect(parse(1006, '{"1 2","3"}')).toEqual([[1, 2], [3]]);
    expect(parse(1013, '{"",NULL}')).toEqual([[], null]);
  });

  it('keeps json elements as their text', () => {
    const value = parse(199, '{"{\\"a\\": 1.10}",NULL,"[12345678901234567890123]"}');
    expect(serializeResponse(value)).toBe('[{"a": 1.10},null,[12345678901234567890123]]');
  });

  it('follows a learned custom array: element rule and delimiter', () => {
    const custom = new TypeRegistry();
    expect(custom.parserFor(900_010)('{1,2}')).toBe('{1,2}');
    custom.remember(new Map([[900_010, { name: '_positive', elementOid: 23 }]]));
    expect(custom.parserFor(900_010)('{1,2}')).toEqual([1, 2]);
    custom.remember(new Map([[900_011, { name: '_boxy', elementOid: 603, delimiter: ';' }]]));
    expect(custom.parserFor(900_011)('{(1,1),(0,0);NULL}')).toEqual(['(1,1),(0,0)', null]);
  });
});

describe('scalar rules', () => {
  it('keeps float -0 as -0 in JSON, NaN and infinities as text', () => {
    expect(serializeResponse([parse(701, '-0'), parse(700, '-0'), parse(701, '0')])).toBe(
      '[-0,-0,0]',
    );
    expect(parse(701, 'NaN')).toBe('NaN');
    expect(parse(700, 'Infinity')).toBe('Infinity');
    expect(parse(701, '1e+100')).toBe(1e100);
  });

  it('writes every json text back byte for byte, small ones included', () => {
    const texts = [
      'true',
      'false',
      'null',
      '0',
      '-0',
      '123',
      '-123456789012345',
      '1234567890123456',
      '12345678901234567890123',
      '1e5',
      '1.10',
      '"a"',
      '""',
      '"a\\"b"',
      '"é😀"',
      '"\\u00e9"',
      ' 1',
      '[]',
      '{}',
      '"x\u2028y"',
    ];
    for (const oid of [114, 3802])
      for (const text of texts)
        expect(serializeResponse({ v: parse(oid, text) })).toBe(`{"v":${text}}`);
  });

  it('keeps json and jsonb text as it is', () => {
    for (const oid of [114, 3802]) {
      const value = parse(oid, '{"b": 1, "b": 12345678901234567890123, "1": 1.10}');
      expect(value).toBeInstanceOf(RawJson);
      expect((value as RawJson).text).toBe('{"b": 1, "b": 12345678901234567890123, "1": 1.10}');
    }
  });
});
