/**
 * Values arrive as PostgreSQL's text with their column's type OID. They are parsed as
 * node-postgres parses text by default (pg-types 2.x with postgres-array 2, postgres-date 1,
 * postgres-interval 1, postgres-bytea 1), so code moving from pg sees the same values; bytea is a
 * Uint8Array rather than a Buffer, for runtimes without Node's built-ins. Those packages use
 * Buffer, so their behaviour is rewritten here, quirks included (e.g. numeric[] gives numbers
 * while numeric gives strings): same input, same output.
 */

/** Turns one value's text into a JavaScript value. */
export type ValueParser = (text: string) => unknown;

/** Parsers by type OID, taking precedence over the defaults. */
export type TypeOverrides = Record<number, ValueParser>;

const identity: ValueParser = (text) => text;

// --- Scalars -----------------------------------------------------------------------------------

const BOOL_TRUE = new Set(['TRUE', 't', 'true', 'y', 'yes', 'on', '1']);
const parseBool = (text: string): boolean => BOOL_TRUE.has(text);

const parseInteger = (text: string): number => parseInt(text, 10);

/** A regular expression's group as a number; a missing group is NaN, as parseInt(undefined). */
const int = (digits: string | undefined): number => parseInt(digits ?? '', 10);

/** pg's parsePoint: `(x,y)`; anything else is null. */
function parsePoint(text: string): { x: number; y: number } | null {
  if (text[0] !== '(') return null;
  const [x, y] = text.substring(1, text.length - 1).split(',');
  return { x: parseFloat(x ?? ''), y: parseFloat(y ?? '') };
}

/** pg's parseCircle: `<(x,y),r>`, scanned as pg-types scans it. */
function parseCircle(text: string): { x: number; y: number; radius: number } | null {
  if (text[0] !== '<' && text[1] !== '(') return null;
  let point = '(';
  let radius = '';
  let pointParsed = false;
  for (let i = 2; i < text.length - 1; i++) {
    if (!pointParsed) {
      point += text[i];
      pointParsed = text[i] === ')';
    } else if (text[i] !== ',') {
      radius += text[i];
    }
  }
  return { ...(parsePoint(point) as { x: number; y: number }), radius: parseFloat(radius) };
}

// --- Dates and times (postgres-date's regular expressions, verbatim) -----------------------------

const DATE_TIME = /(\d{1,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,})?.*?( BC)?$/;
const DATE_ONLY = /^(\d{1,})-(\d{2})-(\d{2})( BC)?$/;
const TIME_ZONE = /([Z+-])(\d{2})?:?(\d{2})?:?(\d{2})?/;
const INFINITY = /^-?infinity$/;

/** Year 1 BC is year 0 in JavaScript, 2 BC is -1, and so on. */
const bcYear = (year: number): number => -(year - 1);

/** Date's constructors read years 0 to 99 as 1900 to 1999; postgres-date sets them again. */
const isTwoDigitYear = (year: number): boolean => year >= 0 && year < 100;

/** The zone's offset in milliseconds, or undefined for a timestamp without time zone. */
function zoneOffsetMs(text: string): number | undefined {
  if (text.endsWith('+00')) return 0;
  const zone = TIME_ZONE.exec(text.split(' ')[1] ?? '');
  if (!zone) return undefined;
  if (zone[1] === 'Z') return 0;
  const seconds = int(zone[2]) * 3600 + int(zone[3] || '0') * 60 + int(zone[4] || '0');
  return (zone[1] === '-' ? -1 : 1) * seconds * 1000;
}

/** A date alone is midnight local time, as postgres-date makes it. */
function parseDateOnly(text: string): Date | null {
  const match = DATE_ONLY.exec(text);
  if (!match) return null;
  const year = match[4] ? bcYear(int(match[1])) : int(match[1]);
  const date = new Date(year, int(match[2]) - 1, Number(match[3]));
  if (isTwoDigitYear(year)) date.setFullYear(year);
  return date;
}

/**
 * date, timestamp and timestamptz, as postgres-date: ±infinity become ±Infinity (numbers), a
 * timestamp without zone is local time, microseconds are truncated to milliseconds by Date.
 */
function parseTimestamp(text: string): Date | number | null {
  if (INFINITY.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  const match = DATE_TIME.exec(text);
  if (!match) return parseDateOnly(text);
  const year = match[8] ? bcYear(int(match[1])) : int(match[1]);
  const fields = [
    year,
    int(match[2]) - 1,
    Number(match[3]),
    int(match[4]),
    int(match[5]),
    int(match[6]),
    match[7] ? 1000 * parseFloat(match[7]) : 0,
  ] as const;
  const offset = zoneOffsetMs(text);
  if (offset === undefined) {
    const date = new Date(...fields);
    if (isTwoDigitYear(year)) date.setFullYear(year);
    return date;
  }
  const date = new Date(Date.UTC(...fields));
  if (isTwoDigitYear(year)) date.setUTCFullYear(year);
  if (offset !== 0) date.setTime(date.getTime() - offset);
  return date;
}

// --- Interval (postgres-interval's expression, verbatim) -----------------------------------------

/**
 * The fields postgres-interval sets, only the non-zero ones, and its `toPostgres()` (not
 * enumerable, as on its prototype), so that an interval read and sent back as a parameter is the
 * same interval. Its toISO() and toISOString() are left out.
 */
export type Interval = Partial<
  Record<'years' | 'months' | 'days' | 'hours' | 'minutes' | 'seconds' | 'milliseconds', number>
>;

const INTERVAL = new RegExp(
  [
    '([+-]?\\d+)\\s+years?',
    '([+-]?\\d+)\\s+mons?',
    '([+-]?\\d+)\\s+days?',
    '([+-])?([\\d]*):(\\d\\d):(\\d\\d)\\.?(\\d{1,6})?',
  ]
    .map((part) => `(${part})?`)
    .join('\\s*'),
);

const INTERVAL_GROUPS = [
  ['years', 2],
  ['months', 4],
  ['days', 6],
  ['hours', 9],
  ['minutes', 10],
  ['seconds', 11],
  ['milliseconds', 12],
] as const;

/** The order postgres-interval writes the fields in. */
const WRITTEN_FIELDS = ['seconds', 'minutes', 'hours', 'days', 'months', 'years'] as const;

/** postgres-interval's toPostgres(): `1 days 2 hours`, fractions of seconds with the seconds. */
function intervalText(this: Interval): string {
  const fields: string[] = WRITTEN_FIELDS.filter((field) => Object.hasOwn(this, field));
  if (this.milliseconds && !fields.includes('seconds')) fields.push('seconds');
  if (fields.length === 0) return '0';
  return fields
    .map((field) => {
      let value: number | string = this[field as keyof Interval] ?? 0;
      if (field === 'seconds' && this.milliseconds) {
        value = (value + this.milliseconds / 1000).toFixed(6).replace(/\.?0+$/, '');
      }
      return `${value} ${field}`;
    })
    .join(' ');
}

function parseInterval(text: string): Interval {
  const interval: Interval = {};
  Object.defineProperty(interval, 'toPostgres', { value: intervalText });
  if (!text) return interval;
  // Every part of the expression is optional: it always matches, if only the empty string.
  const match = INTERVAL.exec(text) as RegExpExecArray;
  // The time part's sign is one sign for hours, minutes, seconds and the fraction.
  const timeIsNegative = match[8] === '-';
  for (const [field, group] of INTERVAL_GROUPS) {
    const digits = match[group];
    if (!digits) continue;
    // The fraction is microseconds with trailing zeros left out; milliseconds keep a fraction.
    let value =
      field === 'milliseconds'
        ? parseInt(digits + '000000'.slice(digits.length), 10) / 1000
        : parseInt(digits, 10);
    if (!value) continue;
    if (timeIsNegative && group >= 9) value = -value;
    interval[field] = value;
  }
  return interval;
}

// --- bytea ---------------------------------------------------------------------------------------

/**
 * bytea's hex format (`\x0102`) or its older escape format (`\001\\`). In the escape format a
 * backslash not followed by three octal digits or another backslash is kept as is: postgres-bytea
 * loops forever on it, and PostgreSQL never sends it.
 */
function parseBytea(text: string): Uint8Array {
  if (text.startsWith('\\x')) {
    // Like Buffer.from(hex, 'hex'): decoding stops at the first pair that is not hexadecimal.
    const bytes: number[] = [];
    for (let i = 2; i + 1 < text.length; i += 2) {
      const pair = text.slice(i, i + 2);
      if (!/^[0-9a-fA-F]{2}$/.test(pair)) break;
      bytes.push(parseInt(pair, 16));
    }
    return Uint8Array.from(bytes);
  }
  const bytes: number[] = [];
  for (let i = 0; i < text.length;) {
    const octal = text.slice(i + 1, i + 4);
    if (text[i] === '\\' && /^[0-7]{3}$/.test(octal)) {
      bytes.push(parseInt(octal, 8) & 0xff);
      i += 4;
    } else if (text[i] === '\\' && text[i + 1] === '\\') {
      bytes.push(0x5c);
      i += 2;
    } else {
      // Buffer's 'binary' encoding keeps a character's low byte.
      bytes.push(text.charCodeAt(i) & 0xff);
      i += 1;
    }
  }
  return Uint8Array.from(bytes);
}

// --- Arrays --------------------------------------------------------------------------------------

type ParsedArray = unknown[];

/**
 * PostgreSQL's array literal as its array output writes it, read as postgres-array 2 reads it: an
 * optional `[1:2]=` bounds prefix is skipped, unquoted NULL is null (quoted "NULL" is a string),
 * a backslash escapes the next character, nested braces are nested arrays. Null elements are not
 * given to the element parser. Malformed literals, which PostgreSQL does not write (an unescaped
 * quote inside an unquoted element, say), may be read differently from postgres-array.
 */
function parseArrayLiteral(text: string, element: ValueParser): ParsedArray {
  let position = text[0] === '[' ? text.indexOf('=') + 1 : 0;

  const readArray = (): ParsedArray => {
    const items: ParsedArray = [];
    position++; // the opening brace
    while (position < text.length && text[position] !== '}') {
      const char = text[position];
      if (char === ',') {
        position++;
      } else if (char === '{') {
        items.push(readArray());
      } else if (char === '"') {
        items.push(element(readText(true)));
      } else {
        const literal = readText(false);
        items.push(literal === 'NULL' ? null : element(literal));
      }
    }
    position++; // the closing brace
    return items;
  };

  // A quoted element ends at its unescaped quote; an unquoted one at a comma or closing brace.
  const readText = (quoted: boolean): string => {
    let literal = '';
    if (quoted) position++;
    while (position < text.length) {
      const char = text[position];
      if (quoted ? char === '"' : char === ',' || char === '}') break;
      if (char === '\\') position++;
      literal += text[position++] ?? '';
    }
    if (quoted) position++;
    return literal;
  };

  return readArray();
}

/** pg-types' array parsers give null for an empty text and skip null elements. */
const arrayOf =
  (element: ValueParser): ValueParser =>
  (text) =>
    text ? parseArrayLiteral(text, element) : null;

// --- The defaults, as pg-types registers them for the text format -------------------------------

const parseJson: ValueParser = (text) => JSON.parse(text);

const DEFAULT_PARSERS: TypeOverrides = {
  16: parseBool,
  17: parseBytea,
  20: identity, // int8 stays a string: it may exceed a double's exact integers
  21: parseInteger,
  23: parseInteger,
  26: parseInteger,
  114: parseJson,
  199: arrayOf(parseJson),
  600: parsePoint,
  651: arrayOf(identity), // cidr[]
  700: parseFloat,
  701: parseFloat,
  718: parseCircle,
  791: arrayOf(identity), // money[]
  1000: arrayOf(parseBool),
  1001: arrayOf(parseBytea),
  1005: arrayOf(parseInteger),
  1007: arrayOf(parseInteger),
  1008: arrayOf(identity), // regproc[]
  1009: arrayOf(identity), // text[]
  1014: arrayOf(identity), // char[]
  1015: arrayOf(identity), // varchar[]
  1016: arrayOf((text) => text.trim()), // int8[] stays strings
  1017: arrayOf(parsePoint),
  1021: arrayOf(parseFloat),
  1022: arrayOf(parseFloat),
  1028: arrayOf(parseInteger), // oid[]
  1040: arrayOf(identity), // macaddr[]
  1041: arrayOf(identity), // inet[]
  1082: parseTimestamp,
  1114: parseTimestamp,
  1115: arrayOf(parseTimestamp),
  1182: arrayOf(parseTimestamp),
  1183: arrayOf(identity), // time[]
  1184: parseTimestamp,
  1185: arrayOf(parseTimestamp),
  1186: parseInterval,
  1187: arrayOf(parseInterval),
  1231: arrayOf(parseFloat), // numeric[] gives numbers in pg, although numeric gives strings
  1270: arrayOf(identity), // timetz[]
  2951: arrayOf(identity), // uuid[]
  3802: parseJson,
  3807: arrayOf(parseJson),
  3907: arrayOf(identity), // numrange[]
};

/**
 * The parser of a type: the caller's override, else pg's default, else the text unchanged, as pg
 * leaves the types it has no parser for (numeric, text, time, circle[], ...).
 */
export function parserFor(oid: number, overrides?: TypeOverrides): ValueParser {
  return overrides?.[oid] ?? DEFAULT_PARSERS[oid] ?? identity;
}

const asText: ValueParser = (text) => text;

/**
 * Dates, times, intervals and numeric arrays left as PostgreSQL's text: what drizzle-orm's
 * neon-http driver expects, which sets the same parsers on the Neon driver's global registry
 * (a registry this client does not share). Pass it as `types` under drizzle's neon-http driver.
 */
export const DATE_TIME_AS_TEXT: TypeOverrides = Object.fromEntries(
  [1184, 1114, 1082, 1186, 1231, 1115, 1185, 1187, 1182].map((oid) => [oid, asText]),
);
