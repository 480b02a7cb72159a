/**
 * Values for every type, as SQL expressions: edge values (limits, NULL, empty, special floats,
 * infinite dates, unicode, quoting characters) and deterministic pseudo-random ones. An expression
 * that PostgreSQL refuses is dropped by the oracle, so lists may try things a type might not take.
 */

import { mulberry32 } from '@sqlgate/testing';

/** Deterministic pseudo-random numbers, so every run compares the same values. */
export const random = mulberry32;

/** A SQL string literal (standard_conforming_strings is on). */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const cast = (type: string) => (text: string) => `${literal(text)}::${type}`;

/** How many pseudo-random values each generator makes, relative to its count. */
const SCALE = 3;

function repeat<T>(count: number, seed: number, make: (next: () => number, i: number) => T): T[] {
  const next = random(seed);
  return Array.from({ length: count * SCALE }, (_, i) => make(next, i));
}

const int = (next: () => number, min: number, max: number): number =>
  Math.floor(min + next() * (max - min + 1));

const bigDigits = (next: () => number, digits: number): string =>
  String(int(next, 1, 9)) + Array.from({ length: digits - 1 }, () => int(next, 0, 9)).join('');

/** Strings that stress quoting in arrays, records and JSON. */
const TRICKY_STRINGS = [
  '',
  ' ',
  '  lead and trail  ',
  'NULL',
  'null',
  'a,b',
  'a;b',
  '{x}',
  '{"a"}',
  '"q"',
  "it's",
  'back\\slash',
  '\\\\',
  '(1,2)',
  '[2:3]={1,2}',
  'é',
  'ß→∑',
  '😀 emoji',
  '中文',
  'line\nbreak',
  'tab\there',
  'cr\rhere',
  '\u00a0nbsp',
  '\u200b zero width',
  'x'.repeat(300),
];

const STRING_ALPHABET = [
  'a',
  'Z',
  '0',
  ' ',
  ',',
  ';',
  '"',
  "'",
  '\\',
  '{',
  '}',
  '(',
  ')',
  'é',
  '😀',
  '\n',
  '=',
];

function randomStrings(count: number, seed: number): string[] {
  return repeat(count, seed, (next) =>
    Array.from(
      { length: int(next, 0, 12) },
      () => STRING_ALPHABET[int(next, 0, STRING_ALPHABET.length - 1)],
    ).join(''),
  );
}

function randomJson(next: () => number, depth: number): string {
  const pick = int(next, 0, depth > 2 ? 5 : 7);
  switch (pick) {
    case 0:
      return 'null';
    case 1:
      return next() < 0.5 ? 'true' : 'false';
    case 2:
      return String(int(next, -1e6, 1e6));
    case 3:
      return [
        `${bigDigits(next, int(next, 15, 30))}`,
        `${int(next, 0, 99)}.${int(next, 0, 9)}0`,
        `-${int(next, 1, 9)}e${int(next, -30, 30)}`,
      ][int(next, 0, 2)] as string;
    case 4:
    case 5:
      return JSON.stringify(randomStrings(1, int(next, 0, 1e9))[0]);
    case 6:
      return `[${Array.from({ length: int(next, 0, 4) }, () => randomJson(next, depth + 1)).join(', ')}]`;
    default: {
      const keys = ['a', 'b', '1', '10', '2', 'a', 'é', ''];
      const entries = Array.from(
        { length: int(next, 0, 4) },
        () =>
          `${JSON.stringify(keys[int(next, 0, keys.length - 1)])}: ${randomJson(next, depth + 1)}`,
      );
      return `{${entries.join(', ')}}`;
    }
  }
}

const JSON_SAMPLES = [
  '{}',
  '[]',
  'null',
  'true',
  '0',
  '-0',
  '1.10',
  '12345678901234567890123',
  '-1.5e-300',
  '[1e400]',
  '[1E+2, 0.000001]',
  '{"b":1,"a":2,"b":3,"2":0,"1":0}',
  ' { "spaced" :  [ 1 , 2 ] } ',
  '"é😀 \\u00e9 \\ud83d\\ude00"',
  '"quote \\" backslash \\\\ slash \\/ controls \\b\\f\\n\\r\\t"',
  '{"nested": {"deeper": [[[]], {"x": null}]}}',
  `${'['.repeat(100)}${']'.repeat(100)}`,
  '"NULL"',
  '{"": ""}',
];

const ZONES = ['+00', '-03:30', '+05:45', '+14', '-12', '+01:02:03'];

function randomDate(next: () => number): string {
  const year = int(next, 1, 9999);
  const month = int(next, 1, 12);
  const day = int(next, 1, 28);
  const bc = next() < 0.1 ? ' BC' : '';
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}${bc}`;
}

function randomTime(next: () => number): string {
  const fraction = next() < 0.5 ? `.${String(int(next, 0, 999999)).padStart(6, '0')}` : '';
  return `${String(int(next, 0, 23)).padStart(2, '0')}:${String(int(next, 0, 59)).padStart(2, '0')}:${String(int(next, 0, 59)).padStart(2, '0')}${fraction}`;
}

function withDateSuffix(stamp: string): string {
  // 'YYYY-MM-DD BC' + time: the era goes last.
  return stamp.endsWith(' BC') ? stamp.slice(0, -3) : stamp;
}

/** Values for each built-in base type by name; a type not listed here has no literal values. */
export function builtinSamples(): Map<string, string[]> {
  const samples = new Map<string, string[]>();
  const add = (type: string, values: string[], asType = type) =>
    samples.set(type, [`NULL::${asType}`, ...values.map(cast(asType))]);

  add('bool', ['t', 'f', 'yes', 'off']);
  add('int2', [
    '-32768',
    '32767',
    '0',
    '-1',
    ...repeat(40, 2, (n) => String(int(n, -32768, 32767))),
  ]);
  add('int4', [
    '-2147483648',
    '2147483647',
    '0',
    ...repeat(60, 4, (n) => String(int(n, -2147483648, 2147483647))),
  ]);
  add('int8', [
    '-9223372036854775808',
    '9223372036854775807',
    '9007199254740993',
    '0',
    ...repeat(60, 8, (n) => `${n() < 0.5 ? '-' : ''}${bigDigits(n, int(n, 1, 19))}`),
  ]);
  add('oid', ['0', '4294967295', ...repeat(30, 26, (n) => String(int(n, 0, 4294967295)))]);
  const floats = [
    '-0',
    '0',
    'NaN',
    'Infinity',
    '-Infinity',
    '0.1',
    '1e10',
    '1e-7',
    '-1.5',
    '123456789',
  ];
  add('float4', [
    ...floats,
    '1.17549435e-38',
    '3.4028235e+38',
    '1.4e-45',
    '16777217',
    ...repeat(60, 700, (n) => `${(n() - 0.5) * 10 ** int(n, -40, 38)}`),
  ]);
  add('float8', [
    ...floats,
    '2.2250738585072014e-308',
    '1.7976931348623157e+308',
    '5e-324',
    '0.30000000000000004',
    '1e21',
    '9007199254740993',
    ...repeat(80, 701, (n) => `${(n() - 0.5) * 10 ** int(n, -300, 300)}`),
  ]);
  add('numeric', [
    'NaN',
    'Infinity',
    '-Infinity',
    '0',
    '-0.000',
    '1.10',
    '12345678901234567890123.456789',
    '1e-100',
    '-1e300',
    ...repeat(
      60,
      1700,
      (n) => `${n() < 0.5 ? '-' : ''}${bigDigits(n, int(n, 1, 40))}.${bigDigits(n, int(n, 1, 20))}`,
    ),
  ]);
  add('money', [
    '-92233720368547758.08',
    '92233720368547758.07',
    '0',
    '12.34',
    ...repeat(30, 790, (n) => `${int(n, -1e9, 1e9)}.${int(n, 10, 99)}`),
  ]);
  const strings = [...TRICKY_STRINGS, ...randomStrings(60, 25)];
  add('text', strings);
  add('varchar', strings);
  add(
    'bpchar',
    strings.map((s) => s.trimEnd()),
  );
  samples.get('bpchar')?.push("'ab'::char(5)", "''::char(3)", "'é'::char(2)");
  add('name', [...strings, 'y'.repeat(80)]);
  add('refcursor', strings.slice(0, 30));
  add('char', ['a', ' ', '"', '\\', ',', '{', 'é', 'Z'], '"char"');
  add('bytea', [
    '\\x',
    '\\xdeadbeef',
    '\\x00ff7f80',
    'abc',
    '\\\\',
    ...repeat(
      30,
      17,
      (n) =>
        `\\x${Array.from({ length: int(n, 0, 24) }, () => int(n, 0, 255).toString(16).padStart(2, '0')).join('')}`,
    ),
  ]);
  add('xml', ['<a b="1">x &amp; y</a>', 'text only', '<r/><r/>', '<é>😀</é>']);
  const jsonRandom = repeat(80, 114, (n) => randomJson(n, 0));
  add('json', [...JSON_SAMPLES, '"\\u0000"', '{"a":1,"a":2}', ...jsonRandom]);
  add('jsonb', [...JSON_SAMPLES, ...jsonRandom]);
  add('jsonpath', [
    '$',
    '$.a[*] ? (@ > 1)',
    'strict $.x.y',
    '$."key with space"',
    'lax $[0 to 2]',
    '$.a ? (@ like_regex "^x" flag "i")',
  ]);
  add('uuid', [
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ...repeat(20, 2950, (n) =>
      Array.from({ length: 32 }, () => int(n, 0, 15).toString(16)).join(''),
    ),
  ]);
  add('date', [
    'infinity',
    '-infinity',
    '4713-01-01 BC',
    '5874897-12-31',
    '2024-02-29',
    '1970-01-01',
    '0001-01-01',
    ...repeat(40, 1082, randomDate),
  ]);
  add('time', [
    '00:00',
    '24:00:00',
    '23:59:59.999999',
    '12:00:00.5',
    ...repeat(30, 1083, randomTime),
  ]);
  add('timetz', [
    '00:00+14',
    '24:00:00-1559',
    '12:34:56.789-03:30',
    '00:00:00+00',
    ...repeat(30, 1266, (n) => `${randomTime(n)}${ZONES[int(n, 0, ZONES.length - 1)]}`),
  ]);
  add('timestamp', [
    'infinity',
    '-infinity',
    '4713-01-01 00:00 BC',
    '294276-12-31 23:59:59.999999',
    '2024-02-29 12:34:56.123456',
    '1970-01-01 00:00:00',
    ...repeat(40, 1114, (n) => {
      const d = randomDate(n);
      return `${withDateSuffix(d)} ${randomTime(n)}${d.endsWith(' BC') ? ' BC' : ''}`;
    }),
  ]);
  add('timestamptz', [
    'infinity',
    '-infinity',
    '4713-01-01 00:00+00 BC',
    '294276-12-31 23:59:59.999999+00',
    '2024-02-29 12:34:56.123456+05:45',
    '1970-01-01 00:00:00+00',
    '2024-03-31 02:30:00 Europe/Berlin',
    ...repeat(40, 1184, (n) => {
      const d = randomDate(n);
      return `${withDateSuffix(d)} ${randomTime(n)}${ZONES[int(n, 0, ZONES.length - 1)]}${d.endsWith(' BC') ? ' BC' : ''}`;
    }),
  ]);
  add('interval', [
    '0',
    '-178000000 years',
    '178000000 years',
    '1 year 2 mons 3 days 04:05:06.789',
    '-1 day +02:03',
    '@ 1 minute ago',
    'P1Y2M3DT4H5M6S',
    '-00:00:00.000001',
    '1 mon -1 day',
    ...repeat(
      40,
      1186,
      (n) =>
        `${int(n, -100, 100)} years ${int(n, -11, 11)} mons ${int(n, -40, 40)} days ${int(n, -30, 30)}:${int(n, 0, 59)}:${int(n, 0, 59)}.${int(n, 0, 999999)}`,
    ),
  ]);
  samples.set('bit', [
    'NULL::bit',
    "B'1'::bit",
    "'1010'::bit(4)",
    "'0000000011111111'::bit(16)",
    "''::bit(0)",
  ]);
  add('varbit', [
    '',
    '1',
    '0101010',
    ...repeat(20, 1562, (n) => Array.from({ length: int(n, 0, 70) }, () => int(n, 0, 1)).join('')),
  ]);
  add('inet', [
    '0.0.0.0',
    '255.255.255.255/32',
    '192.168.0.1/24',
    '10.1.2.3/8',
    '::1',
    '2001:db8::/32',
    '::ffff:1.2.3.4',
    'fe80::1/64',
  ]);
  add('cidr', ['10.0.0.0/8', '2001:db8::/32', '0.0.0.0/0', '192.168.100.128/25', '::/0']);
  add('macaddr', ['08:00:2b:01:02:03', 'ff:ff:ff:ff:ff:ff', '00:00:00:00:00:00', '0800.2b01.0203']);
  add('macaddr8', ['08:00:2b:01:02:03:04:05', '08:00:2b:01:02:03', 'ff:ff:ff:ff:ff:ff:ff:ff']);
  const coordinates = repeat(
    30,
    600,
    (n) => `${((n() - 0.5) * 10 ** int(n, -5, 20)).toPrecision(int(n, 1, 17))}`,
  );
  const pairs = coordinates.map((x, i) => `(${x},${coordinates[(i + 7) % coordinates.length]})`);
  add('point', ['(0,0)', '(-0,0)', '(-1.5,2e300)', '(NaN,Infinity)', '(1e-300,-1e-300)', ...pairs]);
  add('lseg', [
    '[(0,0),(1,1)]',
    '[(-1.5,2),(3,-4.25)]',
    ...pairs.slice(0, 10).map((p, i) => `[${p},${pairs[i + 10]}]`),
  ]);
  add('box', [
    '((1,1),(0,0))',
    '(2,2),(1,1)',
    '((-1.5,2e10),(3,-4))',
    ...pairs.slice(0, 10).map((p, i) => `(${p},${pairs[i + 10]})`),
  ]);
  add('path', [
    '[(0,0),(1,1),(2,0)]',
    '((0,0),(1,1))',
    ...pairs.slice(0, 5).map((p, i) => `[${p},${pairs[i + 5]},${pairs[i + 20]}]`),
  ]);
  add('polygon', [
    '((0,0),(1,1),(1,0))',
    '((0,0))',
    ...pairs.slice(0, 5).map((p, i) => `(${p},${pairs[i + 5]},${pairs[i + 20]})`),
  ]);
  add('line', ['{1,-1,0}', '{0,1,-2.5}', '{1e10,2,3}']);
  add('circle', ['<(0,0),1>', '<(-1.5,2e10),0.5>', '((1,2),3)']);
  add('tid', ['(0,1)', '(4294967295,65535)', '(12,0)']);
  add('xid', ['0', '4294967295', '1234']);
  add('xid8', ['0', '18446744073709551615', '1234']);
  add('cid', ['0', '4294967295']);
  add('regproc', ['int4pl', 'pg_catalog.now', '-', '0']);
  add('regprocedure', ['sum(int4)', 'pg_catalog.now()', 'textcat(text,text)']);
  add('regoper', ['||/', '!~~*']);
  add('regoperator', ['+(int4,int4)', '-(NONE,int4)', '||(text,text)']);
  add('regclass', ['pg_class', 'pg_catalog.pg_type', '0', 'diff_values."Weird, ""Name"""']);
  add('regtype', [
    'int4',
    'character varying',
    'timestamp with time zone[]',
    '"char"',
    'diff_values.diff_mood',
  ]);
  add('regconfig', ['english', 'simple']);
  add('regdictionary', ['simple', 'english_stem']);
  add('regnamespace', ['pg_catalog', 'public', 'diff_values']);
  add('regrole', ['pg_monitor', 'pg_read_all_data', '-']);
  samples.get('regrole')?.push('to_regrole(current_user)');
  add('regcollation', ['"C"', '"default"', '"POSIX"', 'ucs_basic']);
  samples.set('aclitem', [
    'NULL::aclitem',
    "makeaclitem(to_regrole(current_user)::oid, 0, 'SELECT', false)",
    "makeaclitem(0, to_regrole(current_user)::oid, 'SELECT, UPDATE', true)",
  ]);
  add('txid_snapshot', ['10:20:10,14,15', '1:1:', '100:200:']);
  add('pg_snapshot', ['10:20:10,14,15', '1:1:', '100:200:']);
  add('pg_lsn', ['0/0', 'FFFFFFFF/FFFFFFFF', '16/B374D848']);
  add('tsvector', ["'a' 'b':1A", 'a:1,2,3 b:4B', "'it''s' 'é😀':5", '', "'NULL' '{x}' 'a,b'"]);
  samples.get('tsvector')?.push("to_tsvector('english', 'The quick brown foxes jumped')");
  add('tsquery', ['a & !b | c:*', "'fat' <-> 'rat'", "'é' & 'x':AB", '!(a | b) <2> c']);
  samples.set(
    'pg_node_tree',
    [0, 1, 2, 3].map(
      (k) => `(SELECT ev_action FROM pg_catalog.pg_rewrite ORDER BY oid LIMIT 1 OFFSET ${k})`,
    ),
  );
  samples.set('pg_ndistinct', [
    "(SELECT stxdndistinct FROM pg_catalog.pg_statistic_ext_data d JOIN pg_catalog.pg_statistic_ext s ON s.oid = d.stxoid WHERE s.stxname = 'diff_stats' LIMIT 1)",
  ]);
  samples.set('pg_dependencies', [
    "(SELECT stxddependencies FROM pg_catalog.pg_statistic_ext_data d JOIN pg_catalog.pg_statistic_ext s ON s.oid = d.stxoid WHERE s.stxname = 'diff_stats' LIMIT 1)",
  ]);
  samples.set('pg_mcv_list', [
    "(SELECT stxdmcv FROM pg_catalog.pg_statistic_ext_data d JOIN pg_catalog.pg_statistic_ext s ON s.oid = d.stxoid WHERE s.stxname = 'diff_stats' LIMIT 1)",
  ]);
  samples.set('int2vector', [
    'NULL::int2vector',
    "'1 2'::int2vector",
    "''::int2vector",
    "'-32768 32767 0'::int2vector",
    ...[0, 1, 2].map(
      (k) => `(SELECT indkey FROM pg_catalog.pg_index ORDER BY indexrelid LIMIT 1 OFFSET ${k})`,
    ),
  ]);
  samples.set('oidvector', [
    'NULL::oidvector',
    "'23 26'::oidvector",
    "''::oidvector",
    "'0 4294967295'::oidvector",
    ...[0, 1, 2].map(
      (k) => `(SELECT proargtypes FROM pg_catalog.pg_proc ORDER BY oid LIMIT 1 OFFSET ${k * 50})`,
    ),
  ]);

  // Ranges and multiranges.
  add('int4range', ['empty', '[1,10)', '(,)', '[,5]', '(1,2]', '[-2147483648,2147483647)']);
  add('int8range', ['empty', '[1,10)', '(,)', '[-9223372036854775808,9223372036854775807)']);
  add('numrange', ['empty', '[1.10,2.5]', '(,)', '(-1e-20,1e20)']);
  add('daterange', ['empty', '[2024-01-01,infinity)', '(,2024-02-29]', '[-infinity,infinity]']);
  add('tsrange', ['empty', '["2024-01-01 00:00","2024-01-02 00:00:00.5")', '(,infinity)']);
  add('tstzrange', ['empty', '["2024-01-01 00:00+00","2024-01-02 00:00+05:30")', '(,)']);
  add('int4multirange', ['{}', '{[1,3),[5,7)}', '{(,)}', '{empty}']);
  add('int8multirange', ['{}', '{[1,3),[5,7)}']);
  add('nummultirange', ['{}', '{[1.10,2),(3,)}']);
  add('datemultirange', ['{}', '{[2024-01-01,2024-02-01),[2024-03-01,infinity)}']);
  add('tsmultirange', ['{}', '{["2024-01-01 00:00","2024-01-02 00:00")}']);
  add('tstzmultirange', ['{}', '{["2024-01-01 00:00+00","2024-01-02 00:00+00")}']);
  return samples;
}

/**
 * Array expressions of `arrayType` built from its element's values: all of them, with NULL
 * elements, singletons, two dimensions, empty, NULL, and lower bounds other than 1.
 */
export function arraySamples(arrayType: string, elements: readonly string[]): string[] {
  const values = elements.filter((e) => !e.startsWith('NULL::'));
  if (values.length === 0) return [];
  const array = (items: readonly string[]) => `ARRAY[${items.join(', ')}]::${arrayType}`;
  const out = [`NULL::${arrayType}`, `'{}'::${arrayType}`];
  for (let i = 0; i < values.length; i += 12) out.push(array(values.slice(i, i + 12)));
  out.push(array([values[0] as string, 'NULL', values[values.length - 1] as string, 'NULL']));
  for (const value of values.slice(0, 6)) out.push(array([value]));
  if (values.length >= 4) {
    const [a, b, c, d] = values as [string, string, string, string];
    out.push(`ARRAY[ARRAY[${a}, ${b}], ARRAY[${c}, NULL], ARRAY[${d}, ${a}]]::${arrayType}`);
  }
  // Lower bounds other than 1: PostgreSQL's text form, re-read.
  out.push(
    `('[0:1]=' || ${array(values.slice(0, 2).concat(values.length < 2 ? ['NULL'] : []))}::text)::${arrayType}`,
  );
  return out;
}
