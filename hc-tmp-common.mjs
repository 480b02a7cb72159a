import pg from 'pg';
import { sqlgate, Pool } from '@sqlgate/client';
export const CS = 'postgresql://postgres:pw@127.0.0.1:55432/postgres';
export const URL_ = 'http://127.0.0.1:3312';
export const sql = sqlgate({ url: URL_, connectionString: CS });
export const pgpool = new pg.Pool({ connectionString: CS, max: 4 });
export const gpool = new Pool({ url: URL_, connectionString: CS });
import { inspect, isDeepStrictEqual } from 'node:util';
export async function cmp(label, text, params = []) {
  let a, b;
  try { a = (await pgpool.query(text, params)).rows; } catch (e) { a = 'ERR ' + e.code + ' ' + e.message; }
  try { b = (await gpool.query(text, params)).rows; } catch (e) { b = 'ERR ' + e.code + ' ' + e.message; }
  let c;
  try { c = await sql.query(text, params); } catch (e) { c = 'ERR ' + e.code + ' ' + e.message; }
  const ok1 = isDeepStrictEqual(a, b), ok2 = isDeepStrictEqual(a, c);
  if (!ok1 || !ok2) console.log('DIFF', label, '\n pg  :', inspect(a, {depth: 5}), '\n pool:', inspect(b, {depth:5}), '\n sql :', inspect(c, {depth:5}));
  else console.log('ok', label);
}
export async function metrics() {
  const t = await (await fetch(URL_ + '/metrics')).text();
  return t.split('\n').filter(l => /^sqlgate_sessions_open /.test(l)).join(' ');
}
