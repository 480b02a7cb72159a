/**
 * docs/decisions.md 4: every value survives the trip, under a process time zone that is not UTC,
 * with type parsers set per pool and pg's global parsers untouched.
 */
process.env.TZ = 'America/New_York';

import pg from 'pg';
import request from 'supertest';
import { createTestApp, sql, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

async function valueOf(expression: string): Promise<{ value: unknown; type: string }> {
  const response = await query({ sql: `SELECT ${expression} AS v` }).expect(200);
  return { value: response.body.rows[0].v, type: response.body.fields[0].dataTypeName };
}

beforeAll(async () => {
  testApp = createTestApp();
  await sql(`DROP TABLE IF EXISTS value_t; DROP TYPE IF EXISTS value_mood, value_pair; DROP DOMAIN IF EXISTS value_positive;
    CREATE TYPE value_mood AS ENUM ('sad', 'ok', 'happy');
    CREATE TYPE value_pair AS (a int, b text);
    CREATE DOMAIN value_positive AS int CHECK (VALUE > 0);`);
});
afterAll(() => testApp.close());

it.each([
  ['true', true, 'bool'],
  ['1::int2', 1, 'int2'],
  ['2147483647::int4', 2147483647, 'int4'],
  ['9223372036854775807::int8', '9223372036854775807', 'int8'],
  ["'NaN'::numeric", 'NaN', 'numeric'],
  [
    '1234567890123456789012345678901234567890.5::numeric',
    '1234567890123456789012345678901234567890.5',
    'numeric',
  ],
  ['1.5::float4', 1.5, 'float4'],
  ["'NaN'::float8", 'NaN', 'float8'],
  ["'Infinity'::float8", 'Infinity', 'float8'],
  ["'-Infinity'::float4", '-Infinity', 'float4'],
  ['12.34::money', '$12.34', 'money'],
  ["'a  b'::text", 'a  b', 'text'],
  ["'x'::varchar(3)", 'x', 'varchar'],
  ["'ab'::char(4)", 'ab  ', 'bpchar'],
  ["'\\xdeadbeef'::bytea", '\\xdeadbeef', 'bytea'],
  ["'2024-02-29'::date", '2024-02-29', 'date'],
  ["'infinity'::date", 'infinity', 'date'],
  ["'13:14:15.123456'::time", '13:14:15.123456', 'time'],
  ["'13:14:15.5+02'::timetz", '13:14:15.5+02', 'timetz'],
  ["'2024-01-02 03:04:05.123456'::timestamp", '2024-01-02 03:04:05.123456', 'timestamp'],
  ["'-infinity'::timestamp", '-infinity', 'timestamp'],
  [
    "'1 year 2 mons 3 days 04:05:06.000007'::interval",
    '1 year 2 mons 3 days 04:05:06.000007',
    'interval',
  ],
  ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'uuid'],
  [`'{"a": [1, 2.5, null, "x"]}'::json`, { a: [1, 2.5, null, 'x'] }, 'json'],
  [`'{"b": {"c": true}}'::jsonb`, { b: { c: true } }, 'jsonb'],
  ["'192.168.0.1/24'::inet", '192.168.0.1/24', 'inet'],
  ["'10.0.0.0/8'::cidr", '10.0.0.0/8', 'cidr'],
  ["'08:00:2b:01:02:03'::macaddr", '08:00:2b:01:02:03', 'macaddr'],
  [
    'ARRAY[[1, 2], [3, NULL]]::int4[]',
    [
      [1, 2],
      [3, null],
    ],
    '_int4',
  ],
  ["'{}'::text[]", [], '_text'],
  ["ARRAY['a b', NULL, 'c,\"d']", ['a b', null, 'c,"d'], '_text'],
  ['ARRAY[true, false]', [true, false], '_bool'],
  ["ARRAY[1.5::float8, 'NaN']", [1.5, 'NaN'], '_float8'],
  ["ARRAY['1'::int8]", ['1'], '_int8'],
  [`ARRAY['{"k": 1}'::jsonb]`, [{ k: 1 }], '_jsonb'],
  ["'happy'::value_mood", 'happy', 'value_mood'],
  ["ARRAY['sad', 'ok']::value_mood[]", ['sad', 'ok'], '_value_mood'],
  ["ROW(1, 'x y')::value_pair", '(1,"x y")', 'value_pair'],
  ['int4range(1, 10)', '[1,10)', 'int4range'],
  ['5::value_positive', 5, 'int4'],
  ['NULL::int4', null, 'int4'],
])('%s', async (expression, value, type) => {
  expect(await valueOf(expression as string)).toEqual({ value, type });
});

it('keeps timestamptz as PostgreSQL prints it, microseconds included', async () => {
  const response = await query({
    sql: "SET TIME ZONE 'UTC'; SELECT '2024-01-02 03:04:05.123456+00'::timestamptz AS v, 'infinity'::timestamptz AS i",
  }).expect(200);
  expect(response.body.results[1].rows[0]).toEqual({
    v: '2024-01-02 03:04:05.123456+00',
    i: 'infinity',
  });
  expect(response.body.results[1].fields[0].dataTypeName).toBe('timestamptz');
});

it("leaves pg's global type parsers untouched", async () => {
  await valueOf('1::int8');
  expect(pg.types.getTypeParser(20, 'text')('12')).toBe('12');
  expect(pg.types.getTypeParser(1184, 'text')('2024-01-02 03:04:05+00')).toBeInstanceOf(Date);
  expect(pg.types.getTypeParser(16, 'text')('t')).toBe(true);
});
