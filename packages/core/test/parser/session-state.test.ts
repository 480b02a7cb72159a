/**
 * What a statement leaves on its connection beyond its transaction (docs/decisions.md 10.33): what
 * sqlgate refuses behind a transaction pooler, and what it lets run there.
 */
import { loadParser, parseSql } from '../../src/parser';
import { stateOutlivingTransaction } from '../../src/parser/session-state';

beforeAll(async () => {
  await loadParser();
});

function leftBy(sql: string): string | undefined {
  const [statement] = parseSql(sql);
  return stateOutlivingTransaction(statement!);
}

it.each([
  ['SET search_path = app', 'SET'],
  ['SET ROLE reader', 'SET'],
  ['SET SESSION AUTHORIZATION reader', 'SET'],
  ['SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY', 'SET'],
  // Custom variables whose first part is LOCAL, CONSTRAINTS or TRANSACTION, set for the session.
  ["SET local.x = 'a'", 'SET'],
  ["SET constraints.x = 'b'", 'SET'],
  ["SET transaction.x = 'c'", 'SET'],
  ['SET LOCAL . x TO 1', 'SET'],
  ['SET local."X" = 1', 'SET'],
  ["SET SESSION local.x = 'a'", 'SET'],
  ['LISTEN jobs', 'LISTEN'],
  ['LOAD $$auto_explain$$', 'LOAD'],
  ['PREPARE fetch_one AS SELECT 1', 'PREPARE'],
  ['DECLARE c CURSOR WITH HOLD FOR SELECT 1', 'DECLARE ... WITH HOLD'],
  ['CREATE TEMP TABLE scratch (a int)', 'a temporary object (CREATE TEMPORARY)'],
  ['CREATE TEMPORARY VIEW v AS SELECT 1', 'a temporary object (CREATE TEMPORARY)'],
  ['SELECT 1 AS a INTO TEMP scratch', 'a temporary table (SELECT ... INTO TEMPORARY)'],
  ['SELECT pg_advisory_lock(1)', 'pg_advisory_lock()'],
  ['SELECT pg_try_advisory_lock(1, 2)', 'pg_try_advisory_lock()'],
  ["SELECT set_config('search_path', 'app', false)", 'set_config()'],
  ['SELECT setseed(0.5)', 'setseed()'],
  ['EXPLAIN ANALYZE SELECT pg_advisory_lock(1)', 'pg_advisory_lock()'],
  ['UPDATE t SET a = pg_advisory_lock(1)', 'pg_advisory_lock()'],
  // pg_settings' UPDATE rule calls set_config(name, setting, false).
  ["UPDATE pg_settings SET setting = 'app' WHERE name = 'search_path'", 'UPDATE pg_settings'],
  [
    "UPDATE pg_catalog.pg_settings SET setting = 'UTC' WHERE name = 'TimeZone'",
    'UPDATE pg_settings',
  ],
  [`UPDATE "pg_settings" s SET setting = 'UTC' WHERE s.name = 'TimeZone'`, 'UPDATE pg_settings'],
  [`UPDATE U&"pg\\005fsettings" SET setting = 'UTC' WHERE name = 'TimeZone'`, 'UPDATE pg_settings'],
  [
    "WITH u AS (UPDATE pg_settings SET setting = 'app' WHERE name = 'search_path') SELECT 1",
    'UPDATE pg_settings',
  ],
  [
    "EXPLAIN ANALYZE UPDATE pg_settings SET setting = 'app' WHERE name = 'search_path'",
    'UPDATE pg_settings',
  ],
])('%s leaves %s', (sql, what) => {
  expect(leftBy(sql)).toBe(what);
});

it.each([
  'SET LOCAL search_path = app',
  'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE',
  'SET CONSTRAINTS ALL DEFERRED',
  "SET LOCAL local.x = 'a'",
  "SET LOCAL constraints.x = 'b'",
  'RESET local.x',
  'SHOW local.x',
  'RESET search_path',
  'UNLISTEN *',
  'DEALLOCATE ALL',
  'DISCARD ALL',
  'DECLARE c CURSOR FOR SELECT 1',
  'DECLARE c CURSOR WITHOUT HOLD FOR SELECT 1',
  'FETCH 10 FROM c',
  'CLOSE c',
  'CREATE TEMP TABLE scratch (a int) ON COMMIT DROP',
  'SELECT pg_advisory_xact_lock(1)',
  "SELECT set_config('search_path', 'app', true)",
  'BEGIN',
  'COMMIT',
  'CREATE TABLE t (a int)',
  'INSERT INTO t VALUES (1)',
  'SELECT a FROM t',
  "SELECT setting FROM pg_settings WHERE name = 'search_path'",
  "UPDATE app.pg_settings SET setting = 'x'",
  "UPDATE t SET note = 'pg_settings'",
  "EXPLAIN UPDATE pg_settings SET setting = 'app' WHERE name = 'search_path'",
  // Kept for later, not run.
  "CREATE RULE r AS ON INSERT TO t DO ALSO UPDATE pg_settings SET setting = 'x' WHERE name = 'a'",
  "CREATE FUNCTION f() RETURNS void BEGIN ATOMIC UPDATE pg_settings SET setting = 'x' WHERE name = 'a'; END",
  // Code sqlgate cannot read: the limit of the rule.
  'DO $$ BEGIN PERFORM pg_advisory_lock(1); END $$',
  'CALL app.refresh()',
  'SELECT app.start_job()',
])('%s leaves nothing it can be seen to leave', (sql) => {
  expect(leftBy(sql)).toBeUndefined();
});
