/**
 * docs/decisions.md 2.6: no SET (an UPDATE of pg_settings included), role, temp table, prepared statement, cursor, LISTEN or advisory lock
 * survives into another request. Each follow-up runs 2 x POOL_MAX requests at once, so every pooled
 * connection (the one the dirty request used included) is checked.
 */
import request from 'supertest';
import { createTestApp, directClient, sql, target, type TestApp } from './support';

const POOL_MAX = 4;
let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

/** Runs `sqlText` 2 x POOL_MAX times at once and returns each first row. */
async function followUps(sqlText: string): Promise<Record<string, unknown>[]> {
  const responses = await Promise.all(
    Array.from({ length: 2 * POOL_MAX }, () => query({ sql: sqlText })),
  );
  return responses.map((response) => {
    expect(response.status).toBe(200);
    return response.body.rows[0];
  });
}

/** Makes sure the pool holds POOL_MAX connections before the dirty request. */
async function fillPool(): Promise<void> {
  await Promise.all(
    Array.from({ length: POOL_MAX }, () => query({ sql: 'SELECT pg_sleep(0.05)' }).expect(200)),
  );
}

beforeAll(async () => {
  testApp = createTestApp({ poolMax: POOL_MAX });
  await sql(`DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hygiene_role') THEN CREATE ROLE hygiene_role; END IF;
  END $$`);
  await sql('GRANT hygiene_role TO CURRENT_USER');
});
afterAll(() => testApp.close());
beforeEach(fillPool);

it.each([
  [
    'SET search_path TO pg_catalog; SELECT 1',
    'SHOW search_path',
    { search_path: '"$user", public' },
  ],
  ['SET statement_timeout = 1; SELECT 1', 'SHOW statement_timeout', { statement_timeout: '0' }],
  ['SET ROLE hygiene_role', 'SELECT current_user = session_user AS same', { same: true }],
  [
    "SELECT set_config('search_path', '', false)",
    'SHOW search_path',
    { search_path: '"$user", public' },
  ],
  // pg_settings' UPDATE rule calls set_config(name, setting, false): a SET for the session.
  [
    "UPDATE pg_settings SET setting = 'pg_catalog' WHERE name = 'search_path'",
    'SHOW search_path',
    { search_path: '"$user", public' },
  ],
  [
    `UPDATE "pg_catalog".pg_settings AS s SET setting = 'Pacific/Chatham' WHERE s.name = 'TimeZone'`,
    "SELECT source = 'session' AS changed FROM pg_settings WHERE name = 'TimeZone'",
    { changed: false },
  ],
  [
    'CREATE TEMP TABLE hygiene_tmp (id int)',
    "SELECT to_regclass('pg_temp.hygiene_tmp') IS NULL AS gone",
    { gone: true },
  ],
  [
    'PREPARE hygiene_plan AS SELECT 1',
    'SELECT count(*)::int AS prepared FROM pg_prepared_statements WHERE from_sql',
    { prepared: 0 },
  ],
  [
    'DECLARE hygiene_cursor CURSOR WITH HOLD FOR SELECT 1',
    "SELECT count(*)::int AS cursors FROM pg_cursors WHERE name <> ''",
    { cursors: 0 },
  ],
  [
    'LISTEN hygiene_channel',
    'SELECT count(*)::int AS channels FROM pg_listening_channels()',
    { channels: 0 },
  ],
])('after %s, every pooled connection is clean (%s)', async (dirty, check, expected) => {
  await query({ sql: dirty }).expect(200);
  const rows = await followUps(check);
  for (const row of rows) expect(row).toEqual(expected);
});

it('after SELECT pg_advisory_lock(42), another session can take lock 42', async () => {
  await query({ sql: 'SELECT pg_advisory_lock(42)' }).expect(200);
  await followUps('SELECT 1 AS one');
  const other = await directClient();
  try {
    const { rows } = await other.query('SELECT pg_try_advisory_lock(42) AS taken');
    expect(rows[0]).toEqual({ taken: true });
    await other.query('SELECT pg_advisory_unlock(42)');
  } finally {
    await other.end();
  }
});

it.each([
  'SELECT setseed(0.5), pg_backend_pid() AS pid',
  'DO $$ BEGIN PERFORM setseed(0.5); END $$; SELECT pg_backend_pid() AS pid',
])('after %s, the cleaned connection draws a new random() sequence', async (dirty) => {
  // DISCARD ALL leaves the seed as the caller set it: the cleaning seeds random() anew.
  const other = await directClient();
  let seeded: number;
  try {
    await other.query('SELECT setseed(0.5)');
    seeded = (await other.query<{ r: number }>('SELECT random() AS r')).rows[0]!.r;
  } finally {
    await other.end();
  }
  const answer = await query({ sql: dirty }).expect(200);
  const { pid } = (answer.body.rows ?? answer.body.results[1].rows)[0];
  const rows = await followUps('SELECT random() AS r, pg_backend_pid() AS pid');
  // The connection was cleaned and reused, not replaced.
  expect(rows.map((row) => row.pid)).toContain(pid);
  for (const row of rows) expect(row.r).not.toBe(seeded);
});

it('after a failed transaction, every pooled connection is idle and usable', async () => {
  await query({ sql: 'BEGIN; SELECT 1/0' }).expect(400);
  const rows = await followUps('SELECT 1 AS one');
  for (const row of rows) expect(row).toEqual({ one: 1 });
});
