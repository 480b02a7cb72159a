/**
 * The client's value parsers against node-postgres's own (pg-types). Results are compared in a
 * canonical form: Dates by their time, bytes by their values (pg gives a Buffer, the client a
 * Uint8Array), -0 and NaN by name, a throw as a throw.
 */
import { parserFor, type ValueParser } from '../../src/type-parsers';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const pgTypes = require('pg-types') as {
  getTypeParser(oid: number, format: 'text'): ValueParser;
};

export interface TypedText {
  oid: number;
  text: string;
}

export interface Difference extends TypedText {
  ours: unknown;
  pg: unknown;
}

export function canonical(value: unknown): unknown {
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0';
    return Number.isNaN(value) ? 'NaN' : value;
  }
  if (value === null || typeof value !== 'object') return value;
  // Tagged by Object.prototype.toString: under Jest a Buffer or Date may come from another realm.
  if (Object.prototype.toString.call(value) === '[object Date]') {
    return { date: canonical((value as Date).getTime()) };
  }
  if (ArrayBuffer.isView(value)) return { bytes: Array.from(value as Uint8Array) };
  if (Array.isArray(value)) return value.map(canonical);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, canonical(item)]));
}

function outcomeOf(parse: ValueParser, text: string): unknown {
  try {
    return { value: canonical(parse(text)) };
  } catch {
    return { threw: true };
  }
}

/** The texts on which the client's parser and pg's give different values. */
export function differencesFromPg(cases: readonly TypedText[]): Difference[] {
  const differences: Difference[] = [];
  for (const { oid, text } of cases) {
    const ours = outcomeOf(parserFor(oid), text);
    const pg = outcomeOf(pgTypes.getTypeParser(oid, 'text'), text);
    if (JSON.stringify(ours) !== JSON.stringify(pg)) differences.push({ oid, text, ours, pg });
  }
  return differences;
}
