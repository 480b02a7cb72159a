import { cmp, pgpool, gpool, sql } from './hc-tmp-common.mjs';
const u = new Uint8Array([9,8,7,6,5]).subarray(1,3);
await cmp('subarray bytea', 'SELECT $1::bytea a', [u]);
await cmp('int32 bytea', 'SELECT encode($1::bytea,\'hex\') a', [new Int32Array([1,2])]);
await cmp('dataview', 'SELECT encode($1::bytea,\'hex\') a', [new DataView(new ArrayBuffer(2))]);
await cmp('arraybuffer', 'SELECT $1::text a', [new ArrayBuffer(2)]);
const iv = (await pgpool.query("SELECT '1 day 2 hours'::interval a")).rows[0].a;
const iv2 = (await gpool.query("SELECT '1 day 2 hours'::interval a")).rows[0].a;
console.log('pg interval roundtrip', (await pgpool.query('SELECT $1::interval::text a', [iv])).rows);
console.log('client interval roundtrip via pg', (await pgpool.query('SELECT $1::interval::text a', [iv2])).rows);
console.log('client interval roundtrip via client', (await gpool.query('SELECT $1::interval::text a', [iv2])).rows);
console.log(typeof iv.toISO, typeof iv2.toISO, typeof iv2.toPostgres);
// point roundtrip
const pt = (await gpool.query("SELECT '(1,2)'::point a")).rows[0].a;
console.log('point', await gpool.query('SELECT $1::text a', [pt]).then(r=>r.rows).catch(e=>e.message));
console.log('point pg', await pgpool.query('SELECT $1::text a', [pt]).then(r=>r.rows).catch(e=>e.message));
await pgpool.end(); await gpool.end();
