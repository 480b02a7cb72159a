/**
 * docs/decisions.md 2.6 and 10.15: nothing a request does to its session reaches a later request.
 * For every statement class and every DO / CALL / function form that can change session state, the
 * form runs once, then 2 x POOL_MAX probes on the same credentials run at once, each holding its
 * connection long enough that every pooled connection is probed, and each reporting its own
 * session's state. No probe may see the form's effect. The table of forms tried is printed.
 */
import request from 'supertest';
import { createTestApp, sql, target, type TestApp } from './support';

const POOL_MAX = 4;
const PROBES = 2 * POOL_MAX;
const LOCK_KEY = 7_310_015;

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

/** Everything a leak could leave on a session, as seen from inside the session itself. */
const PROBE_SQL = `SELECT pg_backend_pid() AS pid,
  current_setting('search_path') AS search_path,
  current_setting('work_mem') AS work_mem,
  current_user = session_user AS own_role,
  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())::int AS advisory_locks,
  (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())::int AS temp_tables,
  (SELECT count(*) FROM pg_prepared_statements WHERE from_sql)::int AS prepared,
  (SELECT count(*) FROM pg_cursors WHERE name <> '')::int AS cursors,
  (SELECT count(*) FROM pg_listening_channels())::int AS channels
FROM pg_sleep(0.05)`;

type ProbeRow = Record<string, unknown>;
let clean: Omit<ProbeRow, 'pid'>;

interface Form {
  kind: string;
  sql: string;
  readOnly?: boolean;
  /** The dirty request's status when it is not 200. */
  status?: number;
}

const FORMS: Form[] = [
  // Statement classes
  { kind: 'SET', sql: 'SET search_path TO leak_set' },
  { kind: 'SET', sql: "SET work_mem = '7MB'" },
  {
    kind: 'set_config in a read (readOnly)',
    sql: "SELECT set_config('work_mem', '7MB', false)",
    readOnly: true,
  },
  { kind: 'SET ROLE', sql: 'SET ROLE sweep_role' },
  { kind: 'SET SESSION AUTHORIZATION', sql: 'SET SESSION AUTHORIZATION sweep_role' },
  { kind: 'set_config in a read', sql: "SELECT set_config('search_path', 'leak_read', false)" },
  { kind: 'advisory lock in a read', sql: `SELECT pg_advisory_lock(${LOCK_KEY})` },
  {
    kind: 'advisory lock in a read (readOnly)',
    sql: `SELECT pg_advisory_lock(${LOCK_KEY})`,
    readOnly: true,
  },
  {
    kind: 'advisory lock in an INSERT',
    sql: `INSERT INTO sweep_t SELECT 1 FROM pg_advisory_lock(${LOCK_KEY})`,
  },
  { kind: 'temp table', sql: 'CREATE TEMP TABLE sweep_tmp (a int)' },
  { kind: 'temp table by SELECT INTO', sql: 'SELECT 1 AS a INTO TEMP sweep_tmp_into' },
  { kind: 'PREPARE', sql: 'PREPARE sweep_plan AS SELECT 1' },
  { kind: 'cursor WITH HOLD', sql: 'DECLARE sweep_cursor CURSOR WITH HOLD FOR SELECT 1' },
  { kind: 'LISTEN', sql: 'LISTEN sweep_channel' },
  { kind: 'search_path in a script', sql: 'SET search_path TO leak_script; SELECT 1' },
  { kind: 'caller-managed script', sql: "BEGIN; SET work_mem = '7MB'; COMMIT" },
  { kind: 'no-transaction script', sql: "SET work_mem = '7MB'; VACUUM sweep_t" },
  {
    kind: 'caller-managed script left open',
    sql: "BEGIN; SET work_mem = '7MB'",
    // Rolled back and reported as an error (docs/decisions.md 2.3); the SET ran all the same.
    status: 400,
  },
  // DO
  {
    kind: 'DO set_config',
    sql: "DO $$BEGIN PERFORM set_config('search_path', 'leak_do', false); END$$",
  },
  {
    kind: 'DO set_config (readOnly)',
    sql: "DO $$BEGIN PERFORM set_config('search_path', 'leak_do', false); END$$",
    readOnly: true,
  },
  { kind: 'DO EXECUTE SET', sql: "DO $$BEGIN EXECUTE 'SET work_mem = ''7MB'''; END$$" },
  { kind: 'DO SET ROLE', sql: "DO $$BEGIN PERFORM set_config('role', 'sweep_role', false); END$$" },
  { kind: 'DO advisory lock', sql: `DO $$BEGIN PERFORM pg_advisory_lock(${LOCK_KEY}); END$$` },
  { kind: 'DO temp table', sql: 'DO $$BEGIN CREATE TEMP TABLE sweep_do_tmp (a int); END$$' },
  { kind: 'DO LISTEN', sql: "DO $$BEGIN EXECUTE 'LISTEN sweep_channel'; END$$" },
  // CALL
  { kind: 'CALL SET work_mem', sql: 'CALL sweep_set_work_mem()' },
  { kind: 'CALL SET work_mem (readOnly)', sql: 'CALL sweep_set_work_mem()', readOnly: true },
  { kind: 'CALL advisory lock', sql: 'CALL sweep_lock_procedure()' },
  // User-defined functions, in reads and writes
  { kind: 'function set_config in a read', sql: 'SELECT sweep_set_path()' },
  {
    kind: 'function set_config in a read (readOnly)',
    sql: 'SELECT sweep_set_path()',
    readOnly: true,
  },
  { kind: 'function set_config in WHERE', sql: 'SELECT 1 WHERE sweep_set_path() = 1' },
  { kind: 'function set_config among several reads', sql: 'SELECT sweep_set_path(); SELECT 1' },
  { kind: 'function SET ROLE in a read', sql: 'SELECT sweep_set_role()' },
  { kind: 'function advisory lock in a read', sql: 'SELECT sweep_lock()' },
  {
    kind: 'function advisory lock in a read (readOnly)',
    sql: 'SELECT sweep_lock()',
    readOnly: true,
  },
  { kind: 'function temp table in a read', sql: 'SELECT sweep_temp()' },
  { kind: 'function LISTEN in a read', sql: 'SELECT sweep_listen()' },
  {
    kind: 'function set_config in an INSERT',
    sql: 'INSERT INTO sweep_t VALUES (sweep_set_path())',
  },
  { kind: 'function advisory lock in an UPDATE', sql: 'UPDATE sweep_t SET a = sweep_lock()' },
  {
    kind: 'function temp table in a DELETE',
    sql: 'DELETE FROM sweep_t WHERE a = sweep_temp() + 1000',
  },
  {
    kind: 'function set_config in a MERGE',
    sql: 'MERGE INTO sweep_t USING (SELECT sweep_set_path() AS a) s ON sweep_t.a = s.a WHEN MATCHED THEN DO NOTHING',
  },
  {
    kind: 'function in a data-modifying CTE',
    sql: 'WITH d AS (INSERT INTO sweep_t VALUES (sweep_lock()) RETURNING a) SELECT * FROM d',
  },
];

const report: string[][] = [];

beforeAll(async () => {
  testApp = createTestApp({ poolMax: POOL_MAX });
  await sql(`DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sweep_role') THEN CREATE ROLE sweep_role; END IF;
  END $$`);
  await sql('GRANT sweep_role TO CURRENT_USER');
  await sql('DROP TABLE IF EXISTS sweep_t');
  await sql('CREATE TABLE sweep_t (a int)');
  await sql('INSERT INTO sweep_t VALUES (1)');
  await sql(`CREATE OR REPLACE FUNCTION sweep_set_path() RETURNS int LANGUAGE plpgsql AS
    $$BEGIN PERFORM set_config('search_path', 'leak_function', false); RETURN 1; END$$`);
  await sql(`CREATE OR REPLACE FUNCTION sweep_set_role() RETURNS int LANGUAGE plpgsql AS
    $$BEGIN PERFORM set_config('role', 'sweep_role', false); RETURN 1; END$$`);
  await sql(`CREATE OR REPLACE FUNCTION sweep_lock() RETURNS int LANGUAGE plpgsql AS
    $$BEGIN PERFORM pg_advisory_lock(${LOCK_KEY}); RETURN 1; END$$`);
  await sql(`CREATE OR REPLACE FUNCTION sweep_temp() RETURNS int LANGUAGE plpgsql AS
    $$BEGIN CREATE TEMP TABLE IF NOT EXISTS sweep_function_tmp (a int); RETURN 1; END$$`);
  await sql(`CREATE OR REPLACE FUNCTION sweep_listen() RETURNS int LANGUAGE plpgsql AS
    $$BEGIN EXECUTE 'LISTEN sweep_channel'; RETURN 1; END$$`);
  await sql(`CREATE OR REPLACE PROCEDURE sweep_set_work_mem() LANGUAGE plpgsql AS
    $$BEGIN SET work_mem = '7MB'; END$$`);
  await sql(`CREATE OR REPLACE PROCEDURE sweep_lock_procedure() LANGUAGE plpgsql AS
    $$BEGIN PERFORM pg_advisory_lock(${LOCK_KEY}); END$$`);
  const [fresh] = await sql(PROBE_SQL);
  const { pid: _pid, ...state } = fresh!;
  clean = state;
});

afterAll(async () => {
  const header = ['form', 'readOnly', 'SQL', 'status', 'probes', 'connections', 'leaks'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...report.map((row) => row[column]!.length)),
  );
  const line = (row: string[]) =>
    row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
  console.log(['Session-leak sweep: forms tried', line(header), ...report.map(line)].join('\n'));
  await testApp.close();
  await sql('DROP TABLE IF EXISTS sweep_t');
});

/** Makes sure the pool holds POOL_MAX connections, so the dirty one is among those probed. */
async function fillPool(): Promise<void> {
  await Promise.all(
    Array.from({ length: POOL_MAX }, () => query({ sql: 'SELECT pg_sleep(0.05)' }).expect(200)),
  );
}

async function probeAll(): Promise<ProbeRow[]> {
  const responses = await Promise.all(
    Array.from({ length: PROBES }, () => query({ sql: PROBE_SQL })),
  );
  return responses.map((response) => {
    expect(response.status).toBe(200);
    return response.body.rows[0] as ProbeRow;
  });
}

it.each(FORMS.map((form) => [form.kind, form] as const))(
  'after %s, no probe on the same credentials sees its effect',
  async (_kind, form) => {
    await fillPool();
    const dirty = await query({ sql: form.sql, ...(form.readOnly ? { readOnly: true } : {}) });
    const rows = await probeAll();
    const pids = new Set(rows.map((row) => row['pid']));
    const leaks = rows.filter((row) => {
      const { pid: _pid, ...state } = row;
      return JSON.stringify(state) !== JSON.stringify(clean);
    });
    report.push([
      form.kind,
      form.readOnly ? 'yes' : 'no',
      form.sql.length > 60 ? `${form.sql.slice(0, 57)}...` : form.sql,
      String(dirty.status),
      String(rows.length),
      String(pids.size),
      String(leaks.length),
    ]);
    // The form must have run, or the sweep proves nothing about it.
    expect(dirty.status).toBe(form.status ?? 200);
    expect(pids.size).toBe(POOL_MAX);
    expect(leaks).toEqual([]);
  },
);
