import {
  duplicateKeyMessage,
  inexactNumberMessage,
  isExactLiteral,
  lostInParsing,
} from '../src/json-text';

/** The first number parsing changed in `text`, if any. */
const firstInexact = (text: string): string | undefined =>
  lostInParsing(text)?.inexactNumbers[0]?.literal;

/** A literal's exact value as integer × 10^exponent, read with BigInt. */
function exactValue(literal: string): { integer: bigint; exponent: number } {
  const [mantissa = '', exponent = '0'] = literal.toLowerCase().split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  return {
    integer: BigInt(`${whole}${fraction}`.replace(/^(-?)$/, '$10')),
    exponent: Number(exponent) - fraction.length,
  };
}

/**
 * The rule without its shortcut, computed another way (decisions 10.8): the double the literal
 * parses to, written back, has the literal's value; compared as BigInt at a common exponent.
 */
function exactByValue(literal: string): boolean {
  const value = Number(literal);
  if (!Number.isFinite(value)) return false;
  const a = exactValue(literal);
  const b = exactValue(String(value));
  if (a.integer === 0n || b.integer === 0n) return a.integer === b.integer;
  // Far apart exponents with both non-zero cannot be equal once digits are bounded by 40.
  if (Math.abs(a.exponent - b.exponent) > 400) return false;
  const common = Math.min(a.exponent, b.exponent);
  const scaled = (x: { integer: bigint; exponent: number }) =>
    x.integer * 10n ** BigInt(x.exponent - common);
  return scaled(a) === scaled(b);
}

/** Every string and number of a valid JSON text, in order, read by one regular expression. */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*/g;

/** The first number literal `exactByValue` refuses, found token by token. */
function firstInexactByTokens(text: string): string | undefined {
  for (const [token] of text.matchAll(TOKENS)) {
    if (!token.startsWith('"') && !exactByValue(token)) return token;
  }
  return undefined;
}

/** A seeded generator (mulberry32): the same literals on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A valid JSON number literal: sign, integer part, fraction, exponent, each of random length. */
function literal(next: () => number): string {
  const digits = (count: number): string =>
    Array.from({ length: count }, () => Math.floor(next() * 10)).join('');
  const integer =
    next() < 0.3 ? '0' : `${1 + Math.floor(next() * 9)}${digits(Math.floor(next() * 22))}`;
  const fraction = next() < 0.5 ? `.${digits(1 + Math.floor(next() * 22))}` : '';
  const exponent =
    next() < 0.3
      ? `${next() < 0.5 ? 'e' : 'E'}${['', '+', '-'][Math.floor(next() * 3)]}${Math.floor(next() * 400)}`
      : '';
  return `${next() < 0.3 ? '-' : ''}${integer}${fraction}${exponent}`;
}

describe('numbers a JSON body may carry', () => {
  it('agree with the value rule on 20,000 seeded literals, short ones included', () => {
    const next = random(20261126);
    const disagreements: string[] = [];
    let short = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = literal(next);
      if (text.length <= 15) short++;
      if (isExactLiteral(text) !== exactByValue(text)) disagreements.push(text);
    }
    expect(disagreements).toEqual([]);
    expect(short).toBeGreaterThan(2_000);
  });

  it('are found as a literal-by-literal check finds them, on 20,000 seeded bodies', () => {
    const next = random(20261127);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
    const value = (): string =>
      pick([
        () => literal(next),
        () => JSON.stringify(literal(next)), // a number's text in a string: never refused
        () => `"${pick(['a', 'e', 'E', '1', '-', '.', '\\"', ' ', '\\\\'])}${literal(next)}"`,
        () => `[${literal(next)},${literal(next)}]`,
        () => `{"k":${literal(next)}}`,
        () => pick(['true', 'null', '"x"', '{}']),
      ])();
    let refused = 0;
    let kept = 0;
    for (let i = 0; i < 20_000; i++) {
      const fields = Array.from(
        { length: 1 + Math.floor(next() * 4) },
        (_, at) => `"${pick(['port', 'sql', 'e1', 'params', '1e5'])}${at}":${value()}`,
      );
      const text = `{${fields.join(',')}}`;
      const expected = firstInexactByTokens(text);
      expect(firstInexact(text)).toBe(expected);
      if (expected === undefined) kept++;
      else refused++;
    }
    expect(refused).toBeGreaterThan(2_000);
    expect(kept).toBeGreaterThan(2_000);
  });

  it('refuse what parsing would round, and pass what it keeps', () => {
    for (const inexact of [
      '9007199254740993',
      '1e-400',
      '1.0000000000000000000001',
      '1e400',
      '0.12345678901234567890',
    ]) {
      expect(lostInParsing(`{"params":[1,${inexact}]}`)).toEqual({
        inexactNumbers: [{ literal: inexact, field: 'params' }],
      });
    }
    for (const exact of [
      '5432',
      '-0',
      '0.1',
      '123456789012345',
      '1e-300',
      '9007199254740992',
      '0.30000000000000004',
      '10.50000000000000000',
      '1.5E+300',
    ]) {
      expect(lostInParsing(`{"port":${exact},"sql":"SELECT 99999999999999999999"}`)).toBe(
        undefined,
      );
    }
  });
});

/**
 * The first key given twice in one object, read by another method: one regular expression finds
 * every string (a key when a colon follows) and brace, and a stack holds each object's keys.
 */
function firstDuplicateByTokens(text: string): string | undefined {
  const open: Set<string>[] = [];
  for (const [token, string, colon] of text.matchAll(/("(?:[^"\\]|\\.)*")(\s*:)?|[{}]/g)) {
    if (token === '{') open.push(new Set());
    else if (token === '}') open.pop();
    else if (colon !== undefined) {
      const key = JSON.parse(string as string) as string;
      const keys = open[open.length - 1] as Set<string>;
      if (keys.has(key)) return key;
      keys.add(key);
    }
  }
  return undefined;
}

it('names the outermost field of every number parsing changed, and shows a long one cut', () => {
  const text = `{"meta":{"id":12345678901234567890},"params":[[1e400]],"port":1e-400}`;
  expect(lostInParsing(text)?.inexactNumbers).toEqual([
    { literal: '12345678901234567890', field: 'meta' },
    { literal: '1e400', field: 'params' },
    { literal: '1e-400', field: 'port' },
  ]);
  expect(lostInParsing('[1e400]')?.inexactNumbers).toEqual([
    { literal: '1e400', field: undefined },
  ]);
  const long = `0.${'1'.repeat(60)}`;
  expect(inexactNumberMessage({ literal: long, field: 'params' })).toBe(
    `The number ${long.slice(0, 40)}… in 'params' cannot be carried exactly by JSON; send it as a string`,
  );
});

describe('keys a JSON body may hold', () => {
  const duplicateOf = (text: string): string | undefined => {
    return lostInParsing(text)?.duplicateKey;
  };

  it('refuse a key given twice in one object, at any depth, however it is spelled', () => {
    expect(duplicateOf('{"sql":"SELECT 1","sql":"DROP TABLE x"}')).toBe('sql');
    expect(duplicateOf('{"params":[{"a":1,"b":{"c":[{"d":1,"d":2}]}}]}')).toBe('d');
    expect(duplicateOf('{"a":1,"\\u0061":2}')).toBe('a');
    expect(duplicateOf('{ "a" : 1 ,\n\t"a"\r\n:2}')).toBe('a');
    expect(duplicateOf('{"x":{"b":1},"y":{"b":2},"x":3}')).toBe('x');
    // Past a few keys an object's keys go into a set, which every key is checked against.
    const many = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(',');
    expect(duplicateOf(`{${many},"k3":0}`)).toBe('k3');
    expect(duplicateOf(`{${many},"k39":0}`)).toBe('k39');
    expect(duplicateOf(`[{${many}},{${many}}]`)).toBeUndefined();
    expect(duplicateKeyMessage('sql')).toBe(
      'The key "sql" appears twice in one object; send each key once',
    );
  });

  it('take one key in sibling objects, in nested ones, and as a value', () => {
    for (const text of [
      '[{"a":1},{"a":2}]',
      '{"a":{"a":{"a":1}}}',
      '{"x":{"b":1},"y":{"b":2}}',
      '{"a":"a","b":"\\"a\\":","c":["a","a"]}',
      '{"a\\\\":1,"a":2}',
      '{"":1,"\\"":2}',
    ]) {
      expect(duplicateOf(text)).toBeUndefined();
    }
  });

  it('are found as a token-by-token reading finds them, on 20,000 seeded bodies', () => {
    const next = random(20261128);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
    // Few key names, so that objects often repeat one; spellings that parse to the same key.
    const key = (): string => pick(['"a"', '"b"', '"\\u0061"', '"a\\\\"', '"\\"b"', '""']);
    const value = (depth: number): string => {
      const roll = next();
      if (depth > 3 || roll < 0.4) return pick(['1', '"a"', '"b\\":"', 'true', '"{"', '"}"']);
      const count = Math.floor(next() * 4);
      if (roll < 0.6) return `[${Array.from({ length: count }, () => value(depth + 1)).join(',')}]`;
      const members = Array.from(
        { length: count },
        () => `${key()}${pick(['', ' '])}:${value(depth + 1)}`,
      );
      return `{${members.join(',')}}`;
    };
    let duplicates = 0;
    let clean = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = value(0);
      expect(() => JSON.parse(text)).not.toThrow();
      const expected = firstDuplicateByTokens(text);
      expect(duplicateOf(text)).toBe(expected);
      if (expected === undefined) clean++;
      else duplicates++;
    }
    expect(duplicates).toBeGreaterThan(2_000);
    expect(clean).toBeGreaterThan(2_000);
  });
});
