import { cmp, pgpool, gpool } from './hc-tmp-common.mjs';
const Q = [
 ["ints", "SELECT 1::int2 a, 2::int4 b, 9007199254740993::int8 c, 1.5::float4 d, 1.1::float8 e, 'NaN'::float8 f, '-Infinity'::float8 g, 123.4500::numeric h, 'NaN'::numeric i, '-0'::float8 j"],
 ["oid etc", "SELECT 5::oid a, true b, false c, 'x'::char d, 'abc'::name e, 'abc'::text f, 'a'::bpchar(3) g, 'x'::varchar v, 'x'::\"char\" ch"],
 ["dates", "SELECT '2024-01-02'::date a, '2024-01-02 03:04:05.123456'::timestamp b, '2024-01-02 03:04:05.123456+05'::timestamptz c, 'infinity'::timestamp d, '-infinity'::timestamptz e, '0044-03-15 BC'::date f, '12:34:56'::time g, '12:34:56+02'::timetz h, '1 year 2 mons 3 days 04:05:06.7'::interval i, 'infinity'::date j, '10000-01-01'::date k, '0001-01-01 00:00:00'::timestamp l"],
 ["json", `SELECT '{"a":1,"b":[1,2],"c":12345678901234567890}'::json a, '{"a":1.0}'::jsonb b, 'null'::jsonb c, '"s"'::json d, '[]'::jsonb e, NULL::json f`],
 ["bytea", "SELECT '\\x00ff10'::bytea a, ''::bytea b"],
 ["arrays", "SELECT ARRAY[1,2,NULL]::int[] a, ARRAY[[1,2],[3,4]]::int8[] b, ARRAY['a','b,c','\"q\"','NULL',NULL, ' sp ', '']::text[] c, '{}'::int[] d, ARRAY['2024-01-01'::date] e, ARRAY['2024-01-01 01:02:03+00'::timestamptz] f, ARRAY['{\"a\":1}'::jsonb] g, ARRAY[1.5::numeric] h, ARRAY[true,false] i, '[2:3]={1,2}'::int[] j, ARRAY['\\x01'::bytea] k"],
 ["arrays2", "SELECT ARRAY['1 day'::interval] a, ARRAY[1.5::float8,'NaN'] b, ARRAY['a'::bpchar] c, ARRAY['x'::varchar] d, ARRAY[1::oid] e, ARRAY['12:00'::time] f, ARRAY['{\"a\":1}'::json] g, ARRAY['(1,2)'::point] h, ARRAY['x'::char] i, ARRAY['abc'::name] j, ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid] k, ARRAY['1.2.3.4'::inet] l, ARRAY['$1.00'::money] m"],
 ["misc", "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid a, '1.2.3.4/32'::inet b, '(1,2)'::point c, '<(1,2),3>'::circle d, '$1,234.50'::money e, 'a b'::tsvector f, '[1,5)'::int4range g, 'B101'::bit(4) h, 'x'::xml i, '1 2'::int2vector j, 'abc'::regclass::oid k, 'pg_class'::regclass l, 'hstore' m, 1::bigint + 1 n, xid '5' o, '{1,2}'::oidvector p, txid_current_snapshot() IS NOT NULL q, '(1,2),(3,4)'::box r, 'ab'::citext s"],
 ["unicode", "SELECT 'héllo 🎉 \u0000'::text a"],
 ["unicode2", "SELECT E'h\\u00e9llo 🎉 \\\\ '' \" \\n\\t\\r \\u2028' a"],
 ["dup cols", "SELECT 1 a, 2 a"],
 ["empty colname", "SELECT 1, 2"],
 ["nulls", "SELECT NULL a, NULL::int b, NULL::int[] c, ARRAY[NULL]::text[] d"],
 ["records", "SELECT ROW(1,'a') a, (SELECT array_agg(x) FROM generate_series(1,3) x) b"],
 ["domain", "SELECT 1::information_schema.cardinal_number a, 'x'::information_schema.character_data b"],
 ["enum-ish", "SELECT 'x'::unknown a"],
 ["big numeric", "SELECT 1e300::numeric a, 0.1::float4 b, 3.4028235e38::float4 c, 1e-40::float8 d, 123456789.123456789::float8 e"],
 ["interval arr", "SELECT '{\"1 day\",\"-2 hours\"}'::interval[] a"],
 ["timestamptz precise", "SELECT '2024-03-10 02:30:00'::timestamp a, '1970-01-01 00:00:00.0000005'::timestamp b, '2024-06-01 12:00:00.999999+00'::timestamptz c"],
];
for (const [l,q] of Q) await cmp(l, q);
await pgpool.end(); await gpool.end();
