import { firstInexactNumber, isExactLiteral, scanForInexactNumber } from '../src/json-numbers';

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

  it('are judged alike with and without the shortcut, on 20,000 seeded bodies', () => {
    const next = random(20261127);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
    const value = (): string =>
      pick([
        () => literal(next),
        () => JSON.stringify(literal(next)), // a number's text in a string: never refused
        () => `"${pick(['a', 'e', 'E', '1', '-', '.', '\\"', ' '])}${literal(next)}"`,
        () => `[${literal(next)},${literal(next)}]`,
        () => pick(['true', 'null', '"x"', '{}']),
      ])();
    let refused = 0;
    let shortcut = 0;
    for (let i = 0; i < 20_000; i++) {
      const fields = Array.from(
        { length: 1 + Math.floor(next() * 4) },
        (_, at) => `"${pick(['port', 'sql', 'e1', 'params', '1e5'])}${at}":${value()}`,
      );
      const text = `{${fields.join(',')}}`;
      const expected = scanForInexactNumber(text);
      expect(firstInexactNumber(text)).toBe(expected);
      if (expected !== undefined) refused++;
      if (!/\d[eE]|[-\d.]{16}/.test(text)) shortcut++;
    }
    // Both paths ran many times: bodies refused, and bodies the shortcut let through at once.
    expect(refused).toBeGreaterThan(2_000);
    expect(shortcut).toBeGreaterThan(2_000);
  });

  it('refuse what parsing would round, and pass what it keeps', () => {
    for (const inexact of [
      '9007199254740993',
      '1e-400',
      '1.0000000000000000000001',
      '1e400',
      '0.12345678901234567890',
    ]) {
      expect(firstInexactNumber(`{"params":[1,${inexact}]}`)).toBe(inexact);
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
      expect(firstInexactNumber(`{"port":${exact},"sql":"SELECT 99999999999999999999"}`)).toBe(
        undefined,
      );
    }
  });
});
