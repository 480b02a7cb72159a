/**
 * How a value in PostgreSQL's text format becomes JSON (DECISIONS.md section 4): every value survives
 * the trip. Numbers that JavaScript cannot hold exactly (int8, numeric, money) stay strings; dates and
 * times stay PostgreSQL's own text (a JS Date loses microseconds and shifts by time zone); bytea stays
 * `\x…` hex text; json is parsed; arrays become JSON arrays of their element rule.
 */
import { parse as parseArrayLiteral } from 'postgres-array';
import { BUILTIN_ARRAY_ELEMENTS } from './builtin-types';

export type ValueParser = (text: string) => unknown;

const asText: ValueParser = (text) => text;
const asBoolean: ValueParser = (text) => text === 't';
const asInteger: ValueParser = (text) => Number(text);
/** NaN and ±Infinity have no JSON number: they stay text. */
const asFloat: ValueParser = (text) => {
  const value = Number(text);
  return Number.isFinite(value) ? value : text;
};
const asJson: ValueParser = (text) => JSON.parse(text);

const OID = {
  bool: 16,
  int2: 21,
  int4: 23,
  oid: 26,
  float4: 700,
  float8: 701,
  json: 114,
  jsonb: 3802,
} as const;

const SCALAR_PARSERS: ReadonlyMap<number, ValueParser> = new Map([
  [OID.bool, asBoolean],
  [OID.int2, asInteger],
  [OID.int4, asInteger],
  [OID.oid, asInteger],
  [OID.float4, asFloat],
  [OID.float8, asFloat],
  [OID.json, asJson],
  [OID.jsonb, asJson],
]);

function scalarParser(oid: number): ValueParser {
  return SCALAR_PARSERS.get(oid) ?? asText;
}

/** An array literal parsed with its element's rule; NULL elements stay null. */
export function arrayParser(elementOid: number): ValueParser {
  const element = scalarParser(elementOid);
  return element === asText
    ? (text) => parseArrayLiteral(text)
    : (text) => parseArrayLiteral(text, element);
}

const builtinParsers = new Map<number, ValueParser>();
for (const [arrayOid, elementOid] of BUILTIN_ARRAY_ELEMENTS)
  builtinParsers.set(arrayOid, arrayParser(elementOid));
for (const [oid, parser] of SCALAR_PARSERS) builtinParsers.set(oid, parser);

/** The parser for a built-in type; text for any other type (custom arrays are handled by the caller). */
export function builtinValueParser(oid: number): ValueParser {
  return builtinParsers.get(oid) ?? asText;
}
