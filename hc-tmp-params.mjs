import { cmp, pgpool, gpool, sql } from './hc-tmp-common.mjs';
const d = new Date('2024-01-02T03:04:05.678Z');
class TP { toPostgres() { return 'from-toPostgres'; } }
class TPnested { toPostgres(prep) { return prep(new Date(0)); } }
const cases = [
  ['date', 'SELECT $1::text a, $1::timestamptz b', [d]],
  ['invalid date', 'SELECT $1::text a', [new Date('x')]],
  ['date array', 'SELECT $1::text a', [[d, null]]],
  ['nested', 'SELECT $1::text a', [[[1,2],[3,4]]]],
  ['nested str', 'SELECT $1::text a', [[['a"b', 'c\\d'],['e,f', null]]]],
  ['empty array', 'SELECT $1::text a', [[]]],
  ['typed array', 'SELECT $1::text a', [new Int32Array([1,2,3])]],
  ['float64array', 'SELECT $1::text a', [new Float64Array([1.5])]],
  ['uint8array', 'SELECT $1::bytea a, $1::text b', [new Uint8Array([0,255,92,39])]],
  ['buffer', 'SELECT $1::bytea a', [Buffer.from([1,2,3])]],
  ['buffer in array', 'SELECT $1::text a', [[Buffer.from([1,2])]]],
  ['toPostgres', 'SELECT $1::text a', [new TP()]],
  ['toPostgres nested', 'SELECT $1::text a', [new TPnested()]],
  ['toPostgres in array', 'SELECT $1::text a', [[new TP()]]],
  ['bigint', 'SELECT $1::text a, $1::int8 b', [9007199254740993n]],
  ['bigint arr', 'SELECT $1::text a', [[1n, 2n]]],
  ['NaN', 'SELECT $1::text a', [NaN]],
  ['Inf', 'SELECT $1::text a', [Infinity]],
  ['-Inf', 'SELECT $1::float8 a', [-Infinity]],
  ['-0', 'SELECT $1::text a', [-0]],
  ['1e21', 'SELECT $1::text a', [1e21]],
  ['small', 'SELECT $1::text a', [1e-7]],
  ['quotes', 'SELECT $1::text a', [`it's "q" \\ back \\\\ ' ;--`]],
  ['unicode', 'SELECT $1::text a, length($1) l', ['héllo 🎉 \u2028 \ud83d']],
  ['lone surrogate', 'SELECT $1::text a', ['\ud800']],
  ['object', 'SELECT $1::text a, $1::jsonb b', [{a: 1, b: 'x"y', c: [1, {d: null}]}]],
  ['object w date', 'SELECT $1::text a', [{when: d}]],
  ['object w bigint', 'SELECT $1::text a', [{n: 1n}]],
  ['array of objects', 'SELECT $1::text a', [[{a:1},{b:2}]]],
  ['array of arrays of str w braces', 'SELECT $1::text a', [['{x}', 'a b', '']]],
  ['undefined', 'SELECT $1::text a', [undefined]],
  ['null', 'SELECT $1::text a', [null]],
  ['bool', 'SELECT $1::text a', [true]],
  ['array undefined', 'SELECT $1::text a', [[undefined, 1]]],
  ['symbol', 'SELECT $1::text a', [Symbol('x')]],
  ['function', 'SELECT $1::text a', [() => 1]],
  ['number str', 'SELECT $1::int a', ['42']],
  ['too few params', 'SELECT $1::text a, $2::text b', ['x']],
  ['too many params', 'SELECT $1::text a', ['x', 'y']],
  ['nul in param', 'SELECT $1::text a', ['a\u0000b']],
  ['interval obj roundtrip', 'SELECT $1::interval a', [{ days: 1, hours: 2 }]],
  ['json null str', 'SELECT $1::jsonb a', ['null']],
  ['array of dates local', 'SELECT $1::timestamptz[] a', [[d]]],
  ['bool array', 'SELECT $1::bool[] a', [[true, false, null]]],
  ['date in nested', 'SELECT $1::text a', [[[d]]]],
  ['Number obj', 'SELECT $1::text a', [new Number(5)]],
  ['String obj', 'SELECT $1::text a', [new String('s')]],
  ['map', 'SELECT $1::text a', [new Map([[1,2]])]],
];
for (const [l,q,p] of cases) await cmp(l, q, p);
// roundtrip interval from pg parse
const iv = (await gpool.query("SELECT '1 day 2 hours'::interval a")).rows[0].a;
await cmp('interval roundtrip', 'SELECT $1::interval a', [iv]);
await pgpool.end(); await gpool.end();
