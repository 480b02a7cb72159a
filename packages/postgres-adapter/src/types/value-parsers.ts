/**
 * How a value in PostgreSQL's text format becomes JSON without loss (docs/decisions.md section 4,
 * 10.13, 10.14). The parsers may throw on text PostgreSQL never sends; the type registry wraps
 * them so such a value comes back as its text (docs/decisions.md 10.3).
 */
import { isJsonText, RawJson } from '@sqlgate/core';
import { parseArrayText } from './array-text';
import { BUILTIN_ARRAY_ELEMENTS } from './builtin-types';

export type ValueParser = (text: string) => unknown;

export const asText: ValueParser = (text) => text;

const asBoolean: ValueParser = (text) => (text === 't' ? true : text === 'f' ? false : text);

/** int2, int4 and oid always fit a double exactly. */
const asInteger: ValueParser = (text) => {
  const value = Number(text);
  return Number.isInteger(value) && text !== '' ? value : text;
};

/** Shared: RawJson is immutable. */
const NEGATIVE_ZERO = new RawJson('-0');

/** A JSON number, as PostgreSQL writes finite floats. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * NaN and ±Infinity have no JSON number: they stay text. `-0` keeps its sign. A finite float whose
 * text rounds past the double range (`2e+308` under a negative extra_float_digits) is written as
 * that text, still a JSON number.
 */
const asFloat: ValueParser = (text) => {
  if (text === '-0') return NEGATIVE_ZERO;
  const value = Number(text);
  if (Number.isFinite(value) && text !== '') return value;
  return JSON_NUMBER.test(text) ? new RawJson(text) : text;
};

/** A whole JSON text that JSON.stringify writes back identically once parsed. */
const PLAIN_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

/**
 * json text is spliced into the response, so it is checked first: text that is not JSON comes back
 * as a string (docs/decisions.md 10.3, 10.13). Small texts JSON.stringify writes back byte for
 * byte become plain values: the same response, without a splice.
 */
const asJson: ValueParser = (text) => {
  if (text.length <= 16) {
    if (text === 'true') return true;
    if (text === 'false') return false;
    if (text === 'null') return null;
    if (PLAIN_INTEGER.test(text)) return Number(text);
  }
  if (
    text.charCodeAt(0) === 0x22 &&
    text.indexOf('\\') < 0 &&
    text.indexOf('"', 1) === text.length - 1
  )
    return text.slice(1, -1);
  return isJsonText(text) ? new RawJson(text) : text;
};

/** int2vector and oidvector: numbers separated by single spaces; `''` when empty. */
const asVector: ValueParser = (text) => {
  if (text === '') return [];
  return text.split(' ').map((part) => {
    const value = asInteger(part);
    if (typeof value !== 'number') throw new Error(`Not a vector element: ${part}`);
    return value;
  });
};

export const OID = {
  bool: 16,
  int2: 21,
  int2vector: 22,
  int4: 23,
  oid: 26,
  oidvector: 30,
  json: 114,
  box: 603,
  float4: 700,
  float8: 701,
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
  [OID.int2vector, asVector],
  [OID.oidvector, asVector],
]);

/** pg_type.typdelim of the built-in types whose delimiter is not a comma. */
const BUILTIN_DELIMITERS: ReadonlyMap<number, string> = new Map([[OID.box, ';']]);

/** The array delimiter of a built-in element type. */
export function builtinDelimiter(elementOid: number): string {
  return BUILTIN_DELIMITERS.get(elementOid) ?? ',';
}

/**
 * An array literal whose elements go through `element`; NULL elements stay null. An array with
 * lower bounds other than 1 (`[2:3]={1,2}`) has no JSON array form: it stays PostgreSQL's text,
 * also as an element of an array of a domain over an array.
 */
export function arrayParser(element: ValueParser, delimiter: string): ValueParser {
  return (text) => (text.startsWith('[') ? text : parseArrayText(text, delimiter, element));
}

const builtinParsers = new Map<number, ValueParser>(SCALAR_PARSERS);
for (const [arrayOid, elementOid] of BUILTIN_ARRAY_ELEMENTS) {
  if (builtinParsers.has(arrayOid)) continue; // the vectors, listed with their element types
  const element = SCALAR_PARSERS.get(elementOid) ?? asText;
  builtinParsers.set(arrayOid, arrayParser(element, builtinDelimiter(elementOid)));
}

/** The parser of a built-in type; text for any other type (custom arrays are the registry's). */
export function builtinValueParser(oid: number): ValueParser {
  return builtinParsers.get(oid) ?? asText;
}
