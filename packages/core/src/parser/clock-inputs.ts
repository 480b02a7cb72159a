/**
 * Date/time input that reads the clock (`'now'`, `'today'`, `'tomorrow'`, `'yesterday'`), never
 * cached (docs/decisions.md 10.36): the types known never to read it; every other type may.
 */

/** A clock word on its own: the date/time parser splits its input at every non-letter. */
const CLOCK_WORD = /(?<![a-z])(?:now|today|tomorrow|yesterday)(?![a-z])/i;
/** What array, range and record input drop while reading an element: `{n\ow}` is `{now}`. */
const ELEMENT_ESCAPES = /[\\"]/g;

/**
 * Whether a date/time type reading `text` (or an array, range or record of one) may read the
 * clock. Conservative: text that merely holds a clock word as a word (`'closed today'`) counts.
 */
export function namesTheClock(text: string): boolean {
  if (CLOCK_WORD.test(text)) return true;
  if (!text.includes('\\') && !text.includes('"')) return false;
  return CLOCK_WORD.test(text.replace(ELEMENT_ESCAPES, ''));
}

/**
 * Built-in types whose input never reads the clock, as PostgreSQL names them, with their OIDs and
 * their arrays'. Every other type may, user types included (only the catalog could tell).
 */
const CLOCK_FREE_TYPES: ReadonlyArray<readonly [name: string, oid: number, arrayOid: number]> = [
  ['bool', 16, 1000],
  ['bytea', 17, 1001],
  ['char', 18, 1002],
  ['name', 19, 1003],
  ['int8', 20, 1016],
  ['int2', 21, 1005],
  ['int4', 23, 1007],
  ['regproc', 24, 1008],
  ['text', 25, 1009],
  ['oid', 26, 1028],
  ['tid', 27, 1010],
  ['xid', 28, 1011],
  ['cid', 29, 1012],
  ['json', 114, 199],
  ['xml', 142, 143],
  ['point', 600, 1017],
  ['lseg', 601, 1018],
  ['path', 602, 1019],
  ['box', 603, 1020],
  ['polygon', 604, 1027],
  ['line', 628, 629],
  ['cidr', 650, 651],
  ['float4', 700, 1021],
  ['float8', 701, 1022],
  ['circle', 718, 719],
  ['macaddr8', 774, 775],
  ['money', 790, 791],
  ['macaddr', 829, 1040],
  ['inet', 869, 1041],
  ['bpchar', 1042, 1014],
  ['varchar', 1043, 1015],
  ['interval', 1186, 1187],
  ['bit', 1560, 1561],
  ['varbit', 1562, 1563],
  ['numeric', 1700, 1231],
  ['refcursor', 1790, 2201],
  ['regprocedure', 2202, 2207],
  ['regoper', 2203, 2208],
  ['regoperator', 2204, 2209],
  ['regclass', 2205, 2210],
  ['regtype', 2206, 2211],
  ['uuid', 2950, 2951],
  ['txid_snapshot', 2970, 2949],
  ['pg_lsn', 3220, 3221],
  ['tsvector', 3614, 3643],
  ['tsquery', 3615, 3645],
  ['regconfig', 3734, 3735],
  ['regdictionary', 3769, 3770],
  ['jsonb', 3802, 3807],
  ['int4range', 3904, 3905],
  ['numrange', 3906, 3907],
  ['int8range', 3926, 3927],
  ['jsonpath', 4072, 4073],
  ['regnamespace', 4089, 4090],
  ['regrole', 4096, 4097],
  ['regcollation', 4191, 4192],
  ['int4multirange', 4451, 6150],
  ['nummultirange', 4532, 6151],
  ['int8multirange', 4536, 6157],
  ['pg_snapshot', 5038, 5039],
  ['xid8', 5069, 271],
];

const CLOCK_FREE_NAMES = new Set(CLOCK_FREE_TYPES.map(([name]) => name));
const CLOCK_FREE_OIDS = new Set(CLOCK_FREE_TYPES.flatMap(([, oid, arrayOid]) => [oid, arrayOid]));

/**
 * SQL's own spellings of clock-free types, as the tokens show them after `::` (the syntax tree
 * names them as PostgreSQL does: `integer` is `pg_catalog.int4`).
 */
const CLOCK_FREE_SPELLINGS = new Set([
  ...CLOCK_FREE_NAMES,
  ...'int integer smallint bigint real float double boolean character varying decimal dec'.split(
    ' ',
  ),
]);

/**
 * timetz reads the clock for any input without an explicit offset: a time without a date takes
 * today's offset from the session's time zone, which daylight saving time changes.
 */
const TIMETZ = 'timetz';
const TIMETZ_OIDS = new Set([1266, 1270]);

/**
 * Date/time types that functional notation casts to (`date(x)`): known built-ins to the function
 * lists, so only this says they read their argument as date/time input.
 */
export const DATE_TIME_TYPE_NAMES = new Set(
  `date time timetz timestamp timestamptz tsrange tstzrange daterange tsmultirange tstzmultirange
  datemultirange`
    .trim()
    .split(/\s+/),
);

/**
 * Whether the type named so never reads the clock: a clock-free built-in, unqualified or in
 * pg_catalog. `name` is lower-case unless it was quoted, as PostgreSQL folds it.
 */
export function isClockFreeTypeName(name: string, schema?: string): boolean {
  if (schema !== undefined && schema !== 'pg_catalog') return false;
  return CLOCK_FREE_NAMES.has(name);
}

/** Whether the type named so reads the clock whatever its input (timetz, see above). */
export function alwaysReadsTheClock(name: string, schema?: string): boolean {
  return name === TIMETZ && (schema === undefined || schema === 'pg_catalog');
}

/** `isClockFreeTypeName` for a type as the tokens spell it after `::` (`integer`, `double`). */
export function isClockFreeSpelling(word: string): boolean {
  return CLOCK_FREE_SPELLINGS.has(word);
}

/** How a parameter of the type with this OID reads its value (ParameterDescription). */
export function clockInputOfType(oid: number | undefined): 'never' | 'clock-words' | 'always' {
  if (oid !== undefined && CLOCK_FREE_OIDS.has(oid)) return 'never';
  return oid !== undefined && TIMETZ_OIDS.has(oid) ? 'always' : 'clock-words';
}
