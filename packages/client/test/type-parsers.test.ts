/**
 * The client's value parsers against node-postgres's own (pg-types), on tricky texts written here
 * and on texts a real PostgreSQL sends, in this process's time zone and in several others.
 */
import { createRandom, testDatabaseFromEnvironment } from '@sqlgate/testing';
import { Client } from 'pg';
import { parserFor } from '../src/type-parsers';
import { differencesInTimeZone } from './support/in-time-zone';
import { differencesFromPg, type TypedText } from './support/pg-differences';

/**
 * Zones for local time (date, timestamp): whole hours, half an hour, minus 3:30 with DST, DST in
 * Europe with a seconds offset in 1900, +14.
 */
const TIME_ZONES = [
  ['UTC', 0],
  ['Asia/Kolkata', -330],
  ['America/St_Johns', 210],
  ['Europe/Amsterdam', -60],
  ['Pacific/Kiritimati', -840],
] as const;

/** No differences from pg here, nor in a process of each time zone. */
function expectSameAsPg(cases: readonly TypedText[]): void {
  expect(differencesFromPg(cases)).toEqual([]);
  for (const [zone, offset] of TIME_ZONES) {
    const run = differencesInTimeZone(zone, cases);
    expect({ zone, ...run }).toEqual({ zone, offsetOnNewYear2024: offset, differences: [] });
  }
}

const DATES = [
  '2024-02-29',
  '2023-02-28',
  '1970-01-01',
  '0001-01-01',
  '0001-01-01 BC',
  '0044-03-15 BC',
  '4713-11-24 BC',
  '0050-06-15',
  '0099-12-31',
  '0100-01-01',
  '2021-03-28',
  '5874897-12-31',
  'infinity',
  '-infinity',
];

const TIMESTAMPS = [
  '2024-02-29 12:34:56.789123',
  '2024-02-29 00:00:00',
  '2000-01-01 24:00:00',
  '1999-12-31 23:59:59.5',
  '1999-12-31 23:59:59.9999995',
  '2021-03-28 02:30:00',
  '2021-10-31 02:30:00',
  '0001-01-01 00:00:00 BC',
  '0044-03-15 12:00:00 BC',
  '0050-06-15 10:00:00',
  '294276-12-31 23:59:59.999999',
  'infinity',
  '-infinity',
  '2024-02-29',
];

const TIMESTAMPTZS = [
  '2024-02-29 12:34:56.789123+00',
  '2024-02-29 12:34:56+05:30',
  '2024-02-29 12:34:56.5-03:30',
  '2024-02-29 23:59:59.999999+14',
  '2024-02-29 00:00:00-12',
  '1900-01-01 00:00:00+00:19:32',
  '1880-01-01 12:00:00+05:53:28',
  '1880-01-01 12:00:00-00:25:21',
  '0001-01-01 00:00:00+00 BC',
  '0044-03-15 12:00:00+00:53:28 BC',
  '2000-01-01 24:00:00+00',
  '0050-01-01 00:00:00+01',
  '0099-12-31 23:00:00-01',
  '1970-01-01 00:00:00Z',
  'infinity',
  '-infinity',
];

const INTERVALS = [
  '',
  '00:00:00',
  '1 year 2 mons 3 days 04:05:06.789',
  '-1 years -2 mons +3 days -04:05:06.000001',
  '1 day',
  '-1 days',
  '1 mon',
  '3 days 25:00:00',
  '00:00:00.5',
  '-00:00:00.5',
  '1 day -00:00:01',
  '178000000 years',
  '-178000000 years',
  '2562047788:00:54.775807',
  '-2562047788:00:54.775808',
];

const FLOATS = [
  '0',
  '-0',
  'NaN',
  'Infinity',
  '-Infinity',
  '0.1',
  '3.14159',
  '-1.5e-10',
  '1e+308',
  '1.7976931348623157e+308',
  '4.9e-324',
  '1e-320',
  '3.4028235e+38',
  '1.4e-45',
  '123456789012345680000',
];

const STRING_ARRAYS = [
  '{}',
  '{a,b}',
  '{"",NULL,"NULL","null",null}',
  '{"a,b","{x}","q\\"q","b\\\\s"," lead","trail ","tab\there"}',
  '{"\\\\","\\"","\\\\\\""}',
  '{{a,"b c"},{"d\\\\","e}"}}',
  '{{{1}},{{2}}}',
  '{{},{}}',
  '[1:2]={a,b}',
  '[0:1][1:2]={{a,b},{c,d}}',
  '{é,✓,😀}',
];

/** Texts for each OID pg-types parses, edge values first. */
const CASES: Record<number, string[]> = {
  16: ['t', 'f', 'true', 'TRUE', 'y', 'yes', 'on', '1', '0', 'n', 'off', 'T', ''],
  17: [
    '\\x',
    '\\x00ff10Ab',
    '\\x7f805c22',
    'abc',
    '',
    '\\000\\001\\\\\\377',
    'a\\\\b',
    '\\\\\\101',
    '\\\\\\\\',
  ],
  20: ['9223372036854775807', '-9223372036854775808', '0', '12'],
  21: ['0', '-32768', '32767', '007'],
  23: ['2147483647', '-2147483648', ' 12', '1e3'],
  26: ['4294967295', '0'],
  114: [
    '{"a":[1,2,{"b":null}]}',
    '"str"',
    'null',
    '123456789012345678901',
    '[]',
    '{"k":"\\u00e9"}',
  ],
  3802: ['{"a": 1, "b": [true, false]}', '1.5e300', '"a\\"b"'],
  600: ['(1,2)', '(-1.5,2e-10)', '(NaN,Infinity)', '(0,-0)', 'x'],
  700: FLOATS,
  701: FLOATS,
  718: ['<(1,2),3>', '<(-1.5,2.25),0.5>', '<(1e+300,-0),Infinity>', '<(NaN,1),0>'],
  1082: DATES,
  1114: TIMESTAMPS,
  1184: TIMESTAMPTZS,
  1186: INTERVALS,
  1000: ['{}', '{t,f,NULL}', '{{t,f},{f,t}}', '[0:1]={t,f}', ''],
  1001: ['{"\\\\x0102",NULL,"\\\\x"}', '{}', '{{"\\\\x00"},{"\\\\xff"}}'],
  1005: ['{1,2,NULL,-3}', '{{1,2},{3,4}}', '[-2:-1]={5,6}', '{}'],
  1007: ['{2147483647,-2147483648}', '[1:2][1:1]={{1},{NULL}}'],
  1028: ['{4294967295,0}'],
  1016: ['{9223372036854775807,NULL,-1}', '{{1},{2}}'],
  1017: ['{"(1,2)","(3.5,-4)",NULL}', '{}'],
  1021: ['{NaN,Infinity,-Infinity,-0,1e-45,NULL}', '{1.5,2.25}'],
  1022: ['{NaN,-0,1e-320,1.7976931348623157e+308,NULL}'],
  1231: ['{1.50,NaN,123456789012345678901234567890,NULL}', '{{1},{2.5}}'],
  1014: ['{a," ",NULL}'],
  1015: STRING_ARRAYS,
  1009: STRING_ARRAYS,
  1008: ['{int4in,"pg_catalog.textin"}'],
  1040: ['{08:00:2b:01:02:03,NULL}'],
  1041: ['{192.168.0.1/24,::1,NULL}'],
  651: ['{10.0.0.0/8,NULL}'],
  791: ['{$12.34,"-$1,000.00"}'],
  1183: ['{24:00:00,00:00:00.000001,NULL}'],
  1270: ['{12:00:00+05:30,"00:00:00-00:25:21"}'],
  2951: ['{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'],
  3907: ['{"[1,2)",empty,"(,)"}'],
  1115: ['{"2024-02-29 12:34:56.789",infinity,NULL,"0001-01-01 00:00:00 BC"}'],
  1182: ['{2024-02-29,"0044-03-15 BC",-infinity,NULL}'],
  1185: ['{"2024-02-29 12:34:56.789+05:30","1900-01-01 00:00:00+00:19:32",NULL,infinity}'],
  1187: ['{"1 day 02:00:00",NULL,-00:00:01,"1 year 2 mons"}', '{00:00:00}'],
  199: ['{"{\\"a\\":1}",NULL,"[1,2]",null,"\\"s\\""}', '{"NULL"}'],
  3807: ['{"{\\"a\\": \\"b,c\\"}",1,NULL}'],
  // Array types pg-types leaves as text, and types it does not know.
  719: ['{"<(0,0),1>"}'],
  1700: ['1.50', 'NaN', '123456789012345678901234567890.123'],
  25: ['any text', ''],
};

describe('parserFor matches pg-types', () => {
  it('on tricky texts of every type it parses, and some it does not', () => {
    const cases = Object.entries(CASES).flatMap(([oid, texts]) =>
      texts.map((text) => ({ oid: Number(oid), text })),
    );
    expectSameAsPg(cases);
  });
});

/** PostgreSQL's array_out for text elements: quotes what it must, escapes quotes and backslashes. */
function arrayLiteral(items: readonly (string | null | readonly (string | null)[])[]): string {
  const element = (item: string | null | readonly (string | null)[]): string => {
    if (item === null) return 'NULL';
    if (typeof item !== 'string') return arrayLiteral(item);
    const mustQuote = item === '' || /^null$/i.test(item) || /[{}",\\\s]/.test(item);
    return mustQuote ? `"${item.replace(/["\\]/g, '\\$&')}"` : item;
  };
  return `{${items.map(element).join(',')}}`;
}

const SPECIALS = [
  'a',
  'Z',
  ' ',
  ',',
  '{',
  '}',
  '"',
  '\\',
  '\t',
  '\n',
  'é',
  '😀',
  '[',
  ']',
  '=',
  ':',
  "'",
  'NULL',
  'null',
];

function randomStrings(random: ReturnType<typeof createRandom>): (string | null)[] {
  const items: (string | null)[] = [];
  const count = random.int(0, 5);
  for (let i = 0; i < count; i++) {
    if (random.int(0, 7) === 0) {
      items.push(null);
      continue;
    }
    let item = '';
    for (let length = random.int(0, 6); length > 0; length--) item += random.pick(SPECIALS);
    items.push(item);
  }
  return items;
}

describe('seeded random arrays of strings', () => {
  it('parse back to their elements, as pg-types parses them', () => {
    const random = createRandom(20261129);
    const cases: TypedText[] = [];
    for (let round = 0; round < 500; round++) {
      const items = randomStrings(random);
      const nested = round % 5 === 0 && items.length > 0;
      const value = nested ? [items, items] : items;
      const text = arrayLiteral(value);
      expect({ text, parsed: parserFor(1009)(text) }).toEqual({ text, parsed: value });
      cases.push({ oid: 1009, text });
    }
    expect(differencesFromPg(cases)).toEqual([]);
  });
});

describe('overrides and unknown types', () => {
  it('an override wins over the default', () => {
    const overrides = { 20: (text: string) => BigInt(text), 1184: (text: string) => `tz:${text}` };
    expect(parserFor(20, overrides)('9223372036854775807')).toBe(9223372036854775807n);
    expect(parserFor(1184, overrides)('infinity')).toBe('tz:infinity');
    expect(parserFor(23, overrides)('5')).toBe(5);
  });

  it('an unknown OID gives the text unchanged', () => {
    expect(parserFor(999_999)('{1,2}')).toBe('{1,2}');
    expect(parserFor(1700)('1.50')).toBe('1.50');
    expect(parserFor(0, {})('')).toBe('');
  });

  it('bytea is a Uint8Array', () => {
    expect(parserFor(17)('\\x0102ff')).toEqual(new Uint8Array([1, 2, 255]));
  });
});

/** Expressions of every parsed type, as PostgreSQL writes them in each session time zone. */
const EXPRESSIONS = [
  'true',
  'false',
  '(-32768)::int2',
  '2147483647::int4',
  '(-2147483648)::int4',
  '4294967295::oid',
  '(-9223372036854775808)::int8',
  "'NaN'::float4",
  "'-0'::float4",
  "'Infinity'::float4",
  '3.4028235e38::float4',
  '1.4e-45::float4',
  "'-Infinity'::float8",
  "'-0'::float8",
  '1e-320::float8',
  '0.1::float8',
  '1.7976931348623157e308::float8',
  "'NaN'::numeric",
  '1.50::numeric',
  `'{"a":[1,"x\\"y",null]}'::json`,
  `'{"b": {"c": "d,e"}}'::jsonb`,
  "'2024-02-29'::date",
  "'0001-01-01 BC'::date",
  "'4713-01-01 BC'::date",
  "'0050-06-15'::date",
  "'infinity'::date",
  "'2000-01-01 24:00:00'::timestamp",
  "'2024-02-29 12:34:56.789123'::timestamp",
  "'0044-03-15 12:00 BC'::timestamp",
  "'-infinity'::timestamp",
  "'294276-12-31 23:59:59.999999'::timestamp",
  "'2024-02-29 12:34:56.5+05:30'::timestamptz",
  "'2000-01-01 24:00:00+00'::timestamptz",
  "'1900-01-01 00:00'::timestamptz",
  "'1880-01-01 12:00'::timestamptz",
  "'0044-03-15 12:00 BC'::timestamptz",
  "'0050-06-15 10:00'::timestamptz",
  "'infinity'::timestamptz",
  "'1 year 2 mons 3 days 04:05:06.789'::interval",
  "'-1 years -2 mons +3 days -04:05:06.000001'::interval",
  "'0'::interval",
  "'-0.5 seconds'::interval",
  "'178000000 years'::interval",
  "'1 day -1 second'::interval",
  'point(1.5, -2)',
  'circle(point(1, 2), 3.5)',
  "'\\x00ff5c22'::bytea",
  "''::bytea",
  "convert_to('a\\b\"c', 'UTF8')",
  'ARRAY[true, NULL, false]',
  'ARRAY[[1, 2], [3, NULL]]::int2[]',
  "'[0:1]={1,2}'::int4[]",
  'ARRAY[1, 2]::oid[]',
  'ARRAY[9223372036854775807, NULL]::int8[]',
  "ARRAY['NaN', '-0', 'Infinity', NULL]::float4[]",
  "ARRAY['-Infinity', '1e-320', NULL]::float8[]",
  "ARRAY[1.50, 'NaN', NULL]::numeric[]",
  "ARRAY['a', ' ', NULL]::char[]",
  `ARRAY['', 'NULL', NULL, 'a,b', '{x}', 'q"q', 'b\\s', ' lead', 'é✓']::varchar[]`,
  "ARRAY['int4in'::regproc]",
  "ARRAY[ARRAY['a', 'b c'], ARRAY['d\\', 'e}']]::text[]",
  "ARRAY['08:00:2b:01:02:03'::macaddr, NULL]",
  "ARRAY['192.168.0.1/24'::inet, '::1']",
  "ARRAY['10.0.0.0/8'::cidr]",
  "ARRAY['2024-02-29 12:34:56.789'::timestamp, 'infinity', NULL]",
  "ARRAY['2024-02-29'::date, '0044-03-15 BC', NULL]",
  "ARRAY['2024-02-29 12:34:56.789+05:30'::timestamptz, '1900-01-01 00:00', NULL]",
  "ARRAY['1 day'::interval, '-00:00:01', NULL]",
  "ARRAY['\\x0102'::bytea, '', NULL]",
  `ARRAY['{"a":"b,c"}'::json, 'null', NULL]`,
  `ARRAY['{"a": [1]}'::jsonb, '"s"']`,
  "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]",
  'ARRAY[point(1, 2), NULL]',
  "ARRAY['[1,2)'::numrange, 'empty']",
  "ARRAY['12.34'::money]",
  "ARRAY['24:00:00'::time]",
  "ARRAY['12:00:00+05:30'::timetz]",
  'ARRAY[circle(point(0, 0), 1)]',
];

const rawText = { getTypeParser: () => (text: string) => text };

describe('on the text of a real PostgreSQL', () => {
  const database = testDatabaseFromEnvironment();
  const client = new Client({
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    ssl: false,
    types: rawText,
  });

  beforeAll(() => client.connect());
  afterAll(() => client.end());

  async function columnsOf(sql: string, values: unknown[] = []) {
    const result = await client.query({ text: sql, values, rowMode: 'array' });
    const row = result.rows[0] as (string | null)[];
    return result.fields.map((field, index) => ({
      oid: field.dataTypeID,
      text: row[index] ?? null,
    }));
  }

  it('parses every type as pg does, in several session time zones and both bytea formats', async () => {
    const cases: TypedText[] = [];
    for (const [sessionZone, byteaOutput] of [
      ['UTC', 'hex'],
      ['Asia/Kolkata', 'escape'],
      ['Europe/Amsterdam', 'hex'],
      ['America/St_Johns', 'escape'],
    ] as const) {
      await client.query(`SET TimeZone = '${sessionZone}'; SET bytea_output = '${byteaOutput}'`);
      const columns = await columnsOf(`SELECT ${EXPRESSIONS.join(', ')}`);
      expect(columns.map(({ text }) => text)).not.toContain(null);
      cases.push(...columns.map(({ oid, text }) => ({ oid, text: text ?? '' })));
    }
    expect(new Set(cases.map(({ oid }) => oid)).size).toBeGreaterThanOrEqual(40);
    expectSameAsPg(cases);
  });

  it('reads back seeded random arrays of strings as they were sent', async () => {
    const random = createRandom(7);
    const cases: TypedText[] = [];
    for (let round = 0; round < 100; round++) {
      const items = randomStrings(random);
      const value = round % 4 === 0 && items.length > 0 ? [items, items] : items;
      const [column] = await columnsOf('SELECT $1::text[]', [value]);
      const text = column?.text ?? '';
      expect({ text, parsed: parserFor(1009)(text) }).toEqual({ text, parsed: value });
      cases.push({ oid: 1009, text });
    }
    expect(differencesFromPg(cases)).toEqual([]);
  });
});
