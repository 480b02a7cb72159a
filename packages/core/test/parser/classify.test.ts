import { loadParser, parseSql, type ParsedStatement, type StatementClass } from '../../src/parser';
import { COPY_FROM_STDIN_REASON, COPY_TO_STDOUT_REASON } from '../../src/parser/statement-rules';

beforeAll(async () => {
  await loadParser();
});

function parseOne(sql: string): ParsedStatement {
  const statements = parseSql(sql);
  expect(statements).toHaveLength(1);
  return statements[0]!;
}

type Row = [behaviour: string, sql: string, statementClass: StatementClass];

const reads: Row[] = [
  ['SELECT is a read', 'SELECT a FROM t WHERE b = 1', 'read'],
  ['VALUES is a read', 'VALUES (1), (2)', 'read'],
  ['TABLE is a read', 'TABLE t', 'read'],
  ['SHOW is a read', 'SHOW search_path', 'read'],
  ['a parenthesised SELECT is a read', '(SELECT 1) UNION (SELECT 2)', 'read'],
  ['WITH without a data-modifying CTE is a read', 'WITH c AS (SELECT 1) SELECT * FROM c', 'read'],
  [
    'a column named update does not make a WITH a write',
    'WITH c AS (SELECT update FROM t) SELECT * FROM c',
    'read',
  ],
  [
    'EXPLAIN without ANALYZE is a read, even of a write',
    'EXPLAIN INSERT INTO t VALUES (1)',
    'read',
  ],
  ['EXPLAIN (ANALYZE false) is a read', 'EXPLAIN (ANALYZE false) DELETE FROM t', 'read'],
  [
    'EXPLAIN (ANALYZE off, VERBOSE) is a read',
    'EXPLAIN (ANALYZE off, VERBOSE) DELETE FROM t',
    'read',
  ],
  ['EXPLAIN ANALYZE of a plain SELECT is a read', 'EXPLAIN ANALYZE SELECT * FROM t', 'read'],
  ['currval() is a read', "SELECT currval('s')", 'read'],
  ['pg_sleep() is a read', 'SELECT pg_sleep(1)', 'read'],
  ['an unknown user function in a SELECT is a read', 'SELECT my_function(a) FROM t', 'read'],
  ['FOR inside substring() is no lock', "SELECT substring('abc' FROM 1 FOR 2)", 'read'],
];

const writes: Row[] = [
  ['INSERT is a write', 'INSERT INTO t VALUES (1)', 'write'],
  ['UPDATE is a write', 'UPDATE t SET a = 1', 'write'],
  ['DELETE is a write', 'DELETE FROM t', 'write'],
  ['MERGE is a write', 'MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE', 'write'],
  ['SELECT ... INTO is a write', 'SELECT * INTO t2 FROM t', 'write'],
  ['FOR UPDATE is a write', 'SELECT * FROM t FOR UPDATE', 'write'],
  ['FOR NO KEY UPDATE is a write', 'SELECT * FROM t FOR NO KEY UPDATE', 'write'],
  ['FOR SHARE is a write', 'SELECT * FROM t FOR SHARE', 'write'],
  ['FOR KEY SHARE is a write', 'SELECT * FROM t FOR KEY SHARE NOWAIT', 'write'],
  ['a lock in a subquery is a write', 'SELECT * FROM (SELECT * FROM t FOR UPDATE) s', 'write'],
  [
    'a data-modifying CTE is a write',
    'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
    'write',
  ],
  [
    'WITH ... INSERT is a write',
    'WITH c AS (SELECT 1 AS a) INSERT INTO t SELECT a FROM c',
    'write',
  ],
  ['EXPLAIN ANALYZE INSERT is a write', 'EXPLAIN ANALYZE INSERT INTO t VALUES (1)', 'write'],
  [
    'EXPLAIN (ANALYZE, ...) of an UPDATE is a write',
    'EXPLAIN (ANALYZE, BUFFERS) UPDATE t SET a = 1',
    'write',
  ],
  [
    'EXPLAIN (ANALYZE true) of a DELETE is a write',
    'EXPLAIN (ANALYZE true) DELETE FROM t',
    'write',
  ],
  ['EXPLAIN ("analyze") of a DELETE is a write', 'EXPLAIN ("analyze") DELETE FROM t', 'write'],
  [
    'EXPLAIN with two ANALYZE options: the last decides',
    'EXPLAIN (ANALYZE false, ANALYZE) DELETE FROM t',
    'write',
  ],
  [
    'EXPLAIN with two ANALYZE options, the last false, is a read',
    'EXPLAIN (ANALYZE, ANALYZE off) DELETE FROM t',
    'read',
  ],
  [
    'EXPLAIN ANALYZE of a SELECT calling a side-effect function is a write',
    "EXPLAIN ANALYZE SELECT nextval('s')",
    'write',
  ],
  ['nextval() is a write', "SELECT nextval('s')", 'write'],
  ['setval() is a write', "SELECT setval('s', 1)", 'write'],
  ['txid_current() is a write', 'SELECT txid_current()', 'write'],
  ['pg_current_xact_id() is a write', 'SELECT pg_current_xact_id()', 'write'],
  ['pg_advisory_lock() is a write', 'SELECT pg_advisory_lock(1)', 'write'],
  ['pg_advisory_xact_lock() is a write', 'SELECT pg_advisory_xact_lock(1)', 'write'],
  ['pg_try_advisory_lock() is a write', 'SELECT pg_try_advisory_lock(1)', 'write'],
  ['pg_advisory_unlock() is a write', 'SELECT pg_advisory_unlock(1)', 'write'],
  ['set_config() is a write', "SELECT set_config('a.b', 'c', false)", 'write'],
  ['pg_terminate_backend() is a write', 'SELECT pg_terminate_backend(123)', 'write'],
  ['pg_cancel_backend() is a write', 'SELECT pg_cancel_backend(123)', 'write'],
  ['pg_reload_conf() is a write', 'SELECT pg_reload_conf()', 'write'],
  ['pg_rotate_logfile() is a write', 'SELECT pg_rotate_logfile()', 'write'],
  ['lo_import() is a write', "SELECT lo_import('/tmp/x')", 'write'],
  ['lo_export() is a write', "SELECT lo_export(1, '/tmp/x')", 'write'],
  ['lo_create() is a write', 'SELECT lo_create(0)', 'write'],
  ['lo_unlink() is a write', 'SELECT lo_unlink(1)', 'write'],
  ['lo_put() is a write', "SELECT lo_put(1, 0, '\\x00')", 'write'],
  ['lo_from_bytea() is a write', "SELECT lo_from_bytea(0, '\\x00')", 'write'],
  ['dblink_exec() is a write', "SELECT dblink_exec('c', 'DELETE FROM t')", 'write'],
  [
    'dblink() is a write (the remote query is unknown)',
    "SELECT * FROM dblink('c', 'SELECT 1') AS r(a int)",
    'write',
  ],
  ['pg_notify() is a write', "SELECT pg_notify('c', 'x')", 'write'],
  ['a schema-qualified pg_catalog.nextval() is a write', "SELECT pg_catalog.nextval('s')", 'write'],
  ['VALUES calling nextval() is a write', "VALUES (nextval('s'))", 'write'],
  ['CREATE TABLE is a write', 'CREATE TABLE t (a int)', 'write'],
  ['CREATE INDEX is a write', 'CREATE INDEX i ON t (a)', 'write'],
  ['ALTER TABLE is a write', 'ALTER TABLE t ADD COLUMN b int', 'write'],
  ['DROP TABLE is a write', 'DROP TABLE t', 'write'],
  ['GRANT is a write', 'GRANT SELECT ON t TO bob', 'write'],
  ['COMMENT is a write', "COMMENT ON TABLE t IS 'x'", 'write'],
  ['ANALYZE is a write', 'ANALYZE t', 'write'],
  ['TRUNCATE is a write', 'TRUNCATE t', 'write'],
  ['CALL is a write', 'CALL p()', 'write'],
  ['DO is a write', 'DO $$ BEGIN END $$', 'write'],
  ['REFRESH MATERIALIZED VIEW is a write', 'REFRESH MATERIALIZED VIEW m', 'write'],
  ['COPY to a server file is a write', "COPY t TO '/tmp/t.csv'", 'write'],
  ['COPY from a server file is a write', "COPY t FROM '/tmp/t.csv'", 'write'],
  [
    'EXECUTE of a prepared statement is a write (its statement is unknown)',
    'EXECUTE q(1)',
    'write',
  ],
  ['REINDEX TABLE is a write', 'REINDEX TABLE t', 'write'],
  ['CLUSTER of a table is a write', 'CLUSTER t USING i', 'write'],
  ['an unparsable statement is a write', 'SELEKT 1', 'write'],
  ['a statement starting with a psql variable is a write', ':cmd', 'write'],
];

const transactionControl: Row[] = [
  ['BEGIN is transaction control', 'BEGIN', 'transaction-control'],
  [
    'BEGIN ISOLATION LEVEL is transaction control',
    'BEGIN ISOLATION LEVEL SERIALIZABLE',
    'transaction-control',
  ],
  [
    'START TRANSACTION is transaction control',
    'START TRANSACTION READ ONLY',
    'transaction-control',
  ],
  ['COMMIT is transaction control', 'COMMIT', 'transaction-control'],
  ['END is transaction control', 'END', 'transaction-control'],
  ['ROLLBACK is transaction control', 'ROLLBACK', 'transaction-control'],
  ['ABORT is transaction control', 'ABORT', 'transaction-control'],
  ['SAVEPOINT is transaction control', 'SAVEPOINT s', 'transaction-control'],
  ['RELEASE is transaction control', 'RELEASE SAVEPOINT s', 'transaction-control'],
  ['ROLLBACK TO is transaction control', 'ROLLBACK TO SAVEPOINT s', 'transaction-control'],
  ['PREPARE TRANSACTION is transaction control', "PREPARE TRANSACTION 'x'", 'transaction-control'],
  ['COMMIT PREPARED is transaction control', "COMMIT PREPARED 'x'", 'transaction-control'],
  ['ROLLBACK PREPARED is transaction control', "ROLLBACK PREPARED 'x'", 'transaction-control'],
];

const noTransaction: Row[] = [
  ['VACUUM cannot run in a transaction', 'VACUUM t', 'no-transaction'],
  ['VACUUM (options) cannot either', 'VACUUM (VERBOSE, ANALYZE) t', 'no-transaction'],
  ['CREATE DATABASE cannot run in a transaction', 'CREATE DATABASE d', 'no-transaction'],
  ['DROP DATABASE cannot run in a transaction', 'DROP DATABASE d', 'no-transaction'],
  [
    'CREATE TABLESPACE cannot run in a transaction',
    "CREATE TABLESPACE ts LOCATION '/x'",
    'no-transaction',
  ],
  ['DROP TABLESPACE cannot run in a transaction', 'DROP TABLESPACE ts', 'no-transaction'],
  [
    'CREATE INDEX CONCURRENTLY cannot run in a transaction',
    'CREATE INDEX CONCURRENTLY i ON t (a)',
    'no-transaction',
  ],
  [
    'CREATE UNIQUE INDEX CONCURRENTLY cannot either',
    'CREATE UNIQUE INDEX CONCURRENTLY i ON t (a)',
    'no-transaction',
  ],
  [
    'DROP INDEX CONCURRENTLY cannot run in a transaction',
    'DROP INDEX CONCURRENTLY i',
    'no-transaction',
  ],
  [
    'REINDEX ... CONCURRENTLY cannot run in a transaction',
    'REINDEX TABLE CONCURRENTLY t',
    'no-transaction',
  ],
  [
    'REINDEX (options) ... CONCURRENTLY cannot either',
    'REINDEX (VERBOSE) INDEX CONCURRENTLY i',
    'no-transaction',
  ],
  ['REINDEX DATABASE cannot run in a transaction', 'REINDEX DATABASE d', 'no-transaction'],
  [
    'ALTER SYSTEM cannot run in a transaction',
    "ALTER SYSTEM SET work_mem = '64MB'",
    'no-transaction',
  ],
  [
    'ALTER DATABASE ... SET TABLESPACE cannot run in a transaction',
    'ALTER DATABASE d SET TABLESPACE ts',
    'no-transaction',
  ],
  [
    'CREATE SUBSCRIPTION cannot run in a transaction',
    "CREATE SUBSCRIPTION s CONNECTION 'x' PUBLICATION p",
    'no-transaction',
  ],
  [
    'ALTER SUBSCRIPTION ... REFRESH PUBLICATION cannot',
    'ALTER SUBSCRIPTION s REFRESH PUBLICATION',
    'no-transaction',
  ],
  ['DROP SUBSCRIPTION (with its slot) cannot', 'DROP SUBSCRIPTION s', 'no-transaction'],
  [
    'DETACH PARTITION ... CONCURRENTLY cannot',
    'ALTER TABLE t DETACH PARTITION p CONCURRENTLY',
    'no-transaction',
  ],
  ['CLUSTER without a table cannot', 'CLUSTER', 'no-transaction'],
  ['DISCARD ALL cannot run in a transaction', 'DISCARD ALL', 'no-transaction'],
];

const session: Row[] = [
  ['SET changes the session', 'SET search_path TO s', 'session'],
  ['SET LOCAL is session too', 'SET LOCAL work_mem = 1024', 'session'],
  ['SET TRANSACTION is session too', 'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE', 'session'],
  ['RESET changes the session', 'RESET ALL', 'session'],
  ['SET ROLE changes the session', 'SET ROLE bob', 'session'],
  ['SET SESSION AUTHORIZATION changes the session', 'SET SESSION AUTHORIZATION bob', 'session'],
  ['LISTEN changes the session', 'LISTEN c', 'session'],
  ['UNLISTEN changes the session', 'UNLISTEN *', 'session'],
  ['PREPARE changes the session', 'PREPARE q AS SELECT 1', 'session'],
  ['DEALLOCATE changes the session', 'DEALLOCATE ALL', 'session'],
  ['DECLARE changes the session', 'DECLARE c CURSOR WITH HOLD FOR SELECT 1', 'session'],
  ['FETCH needs the same connection', 'FETCH 10 FROM c', 'session'],
  ['MOVE needs the same connection', 'MOVE NEXT IN c', 'session'],
  ['CLOSE needs the same connection', 'CLOSE c', 'session'],
  ['LOAD changes the session', "LOAD 'auto_explain'", 'session'],
  ['DISCARD TEMP changes the session', 'DISCARD TEMP', 'session'],
  ['CREATE TEMP TABLE changes the session', 'CREATE TEMP TABLE x (a int)', 'session'],
  [
    'CREATE TEMPORARY TABLE ... AS changes the session',
    'CREATE TEMPORARY TABLE x AS SELECT 1',
    'session',
  ],
  ['CREATE LOCAL TEMP TABLE changes the session', 'CREATE LOCAL TEMP TABLE x (a int)', 'session'],
  ['CREATE TEMP VIEW changes the session', 'CREATE TEMP VIEW v AS SELECT 1', 'session'],
  [
    'CREATE OR REPLACE TEMP VIEW changes the session',
    'CREATE OR REPLACE TEMP VIEW v AS SELECT 1',
    'session',
  ],
  ['CREATE TEMP SEQUENCE changes the session', 'CREATE TEMP SEQUENCE s', 'session'],
  ['CREATE TABLE pg_temp.x changes the session', 'CREATE TABLE pg_temp.x (a int)', 'session'],
  ['SELECT ... INTO TEMP changes the session', 'SELECT 1 AS a INTO TEMP x', 'session'],
];

describe.each([
  ['read', reads],
  ['write', writes],
  ['transaction-control', transactionControl],
  ['no-transaction', noTransaction],
  ['session', session],
])('classification: %s', (_name, rows) => {
  it.each(rows)('%s', (_behaviour, sql, statementClass) => {
    expect(parseOne(sql).statementClass).toBe(statementClass);
  });
});

describe('changesSession', () => {
  it.each([
    ['SET', 'SET a.b = 1'],
    ['BEGIN', 'BEGIN'],
    ['VACUUM', 'VACUUM'],
    ['DISCARD ALL', 'DISCARD ALL'],
    ['CREATE TEMP TABLE', 'CREATE TEMP TABLE x (a int)'],
    ['set_config(..., false)', "SELECT set_config('a.b', 'c', false)"],
    ['set_config(..., unknown)', "SELECT set_config('a.b', 'c', $1)"],
    ['pg_advisory_lock()', 'SELECT pg_advisory_lock(1)'],
    ['pg_advisory_unlock_all()', 'SELECT pg_advisory_unlock_all()'],
    ['a session lock inside an INSERT', 'INSERT INTO t SELECT pg_advisory_lock(1)'],
    // docs/decisions.md 10.15: code the parser cannot see into may change the session.
    ['DO', "DO $$BEGIN PERFORM set_config('search_path', 'x', false); END$$"],
    ['DO with EXECUTE', "DO $$BEGIN EXECUTE 'SET work_mem = ''8MB'''; END$$"],
    ['CALL', 'CALL set_work_mem()'],
    [
      'EXPLAIN ANALYZE of an INSERT calling a user function',
      'EXPLAIN ANALYZE INSERT INTO t VALUES (f())',
    ],
    ['a user function in a SELECT', 'SELECT my_function(a) FROM t'],
    ['a schema-qualified user function', 'SELECT public.lower(a) FROM t'],
    ['a user function in a WHERE clause', 'SELECT a FROM t WHERE check_it(a)'],
    ['a user function in an INSERT', 'INSERT INTO t (a) VALUES (my_function())'],
    ['a user function in an UPDATE', 'UPDATE t SET a = my_function()'],
    ['a user function in a DELETE', 'DELETE FROM t WHERE my_function(a)'],
    [
      'a user function in a MERGE',
      'MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = f(s.a)',
    ],
    [
      'a user function in a data-modifying CTE',
      'WITH d AS (DELETE FROM t WHERE f(a) RETURNING *) SELECT * FROM d',
    ],
    ['CREATE TABLE', 'CREATE TABLE t (a int)'],
    ['ALTER TABLE', 'ALTER TABLE t ADD COLUMN b int'],
    ['TRUNCATE', 'TRUNCATE t CASCADE'],
    ['GRANT', 'GRANT SELECT ON t TO PUBLIC'],
    ['ANALYZE', 'ANALYZE t'],
    ['EXECUTE of a prepared statement', 'EXECUTE p(1)'],
    ['SELECT ... INTO', 'SELECT * INTO t2 FROM t'],
    ['RESET', 'RESET ALL'],
    ['SET ROLE', 'SET ROLE someone'],
    ['LISTEN', 'LISTEN channel'],
    ['PREPARE', 'PREPARE p AS SELECT 1'],
    ['DECLARE ... WITH HOLD', 'DECLARE c CURSOR WITH HOLD FOR SELECT 1'],
    ['a statement the grammar rejects', 'INSERT INTO t VALUES (f(1)'],
    // pg_settings' UPDATE rule calls set_config(name, setting, false).
    ['an UPDATE of pg_settings', "UPDATE pg_settings SET setting = 'x' WHERE name = 'search_path'"],
    [
      'an UPDATE of pg_catalog.pg_settings, quoted',
      `UPDATE "pg_catalog"."pg_settings" AS s SET setting = 'UTC' WHERE s.name = 'TimeZone'`,
    ],
    ['an UPDATE ONLY of PG_SETTINGS', "UPDATE ONLY PG_SETTINGS SET setting = 'x' WHERE name = 'a'"],
    [
      'an UPDATE of pg_settings in a CTE',
      "WITH u AS (UPDATE pg_settings SET setting = 'x' WHERE name = 'search_path') SELECT 1",
    ],
    [
      'EXPLAIN ANALYZE of an UPDATE of pg_settings',
      "EXPLAIN ANALYZE UPDATE pg_settings SET setting = 'x' WHERE name = 'search_path'",
    ],
  ])('is true for %s', (_name, sql) => {
    expect(parseOne(sql).changesSession).toBe(true);
  });

  it.each([
    ['SELECT', 'SELECT 1'],
    ['INSERT', 'INSERT INTO t VALUES (1)'],
    [
      'set_config(..., true), which ends with the transaction',
      "SELECT set_config('a.b', 'c', true)",
    ],
    ['pg_advisory_xact_lock()', 'SELECT pg_advisory_xact_lock(1)'],
    ['an INSERT with a column list', 'INSERT INTO t (a, b) VALUES (1, 2)'],
    ['an INSERT into a qualified table', 'INSERT INTO s.t (a) VALUES (lower($1))'],
    [
      'an INSERT ... ON CONFLICT with column lists',
      'INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET (a) = ROW(excluded.a)',
    ],
    [
      'an UPDATE calling built-ins',
      "UPDATE t SET a = upper(b), c = now() WHERE d = coalesce($1, 'x')",
    ],
    ['a DELETE', 'DELETE FROM t WHERE a IN (SELECT max(a) FROM u)'],
    [
      'a MERGE',
      'MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)',
    ],
    ['a SELECT FOR UPDATE', 'SELECT * FROM t FOR UPDATE'],
    ['a SELECT calling built-ins', "SELECT count(*), string_agg(a, ',') FROM t AS x (a, b)"],
    ['EXPLAIN without ANALYZE of a user function call', 'EXPLAIN SELECT my_function()'],
    ['an UPDATE of a table of its own named pg_settings', "UPDATE app.pg_settings SET a = 'x'"],
    ['an UPDATE of "PG_SETTINGS", another relation', 'UPDATE "PG_SETTINGS" SET a = 1'],
    ['an UPDATE naming pg_settings in a string', "UPDATE t SET note = 'pg_settings'"],
    [
      'an UPDATE reading pg_settings',
      "UPDATE t SET a = (SELECT setting FROM pg_settings WHERE name = 'work_mem')",
    ],
    [
      'EXPLAIN without ANALYZE of an UPDATE of pg_settings',
      "EXPLAIN UPDATE pg_settings SET setting = 'x' WHERE name = 'search_path'",
    ],
  ])('is false for %s', (_name, sql) => {
    expect(parseOne(sql).changesSession).toBe(false);
  });
});

describe('callsVolatileFunction', () => {
  it.each([
    ['now()', 'SELECT now()'],
    ['CURRENT_TIMESTAMP (a keyword, not a call)', 'SELECT current_timestamp'],
    ['LOCALTIMESTAMP', 'SELECT localtimestamp'],
    ['CURRENT_TIME', 'SELECT 1 WHERE current_time > now()'],
    ['clock_timestamp()', 'SELECT clock_timestamp()'],
    ['statement_timestamp()', 'SELECT statement_timestamp()'],
    ['random()', 'SELECT * FROM t ORDER BY random()'],
    ['gen_random_uuid()', 'SELECT gen_random_uuid()'],
    ['uuid_generate_v4()', 'SELECT uuid_generate_v4()'],
    ['currval()', "SELECT currval('s')"],
    ['pg_sleep()', 'SELECT pg_sleep(0.1)'],
    ['pg_backend_pid()', 'SELECT pg_backend_pid()'],
    ['an unknown function', 'SELECT my_function()'],
    ['a function in another schema, whatever its name', 'SELECT app.lower(a) FROM t'],
    ['a pg_stat_* view', 'SELECT * FROM pg_stat_activity'],
    ['TABLESAMPLE', 'SELECT * FROM t TABLESAMPLE BERNOULLI (10)'],
    ['EXPLAIN ANALYZE (its timings)', 'EXPLAIN ANALYZE SELECT 1'],
    ['SHOW (settings belong to the connection)', 'SHOW work_mem'],
    ["'now' read as a time", "SELECT 'now'::timestamptz"],
    ["date 'today'", "SELECT date 'today'"],
    ["'Tomorrow' with spaces", "SELECT * FROM t WHERE d < ' Tomorrow '::date"],
    ["E'yesterday'", "SELECT E'yesterday'::date"],
    ['a dollar-quoted now', 'SELECT $$now$$::timestamp'],
    ['a tagged dollar-quoted now', 'SELECT $x$NOW$x$::timestamp'],
    ["a clock word among others ('today 10:00' is read)", "SELECT 'today is' FROM t"],
  ])('is true for %s', (_name, sql) => {
    expect(parseOne(sql).callsVolatileFunction).toBe(true);
  });

  it.each([
    ['a plain SELECT', 'SELECT a, b FROM t WHERE c = 1'],
    [
      'known stable built-ins',
      "SELECT lower(a), count(*), coalesce(b, 0), to_char(d, 'YYYY') FROM t GROUP BY 1",
    ],
    ['type modifiers', 'SELECT CAST(a AS varchar(10)), b::numeric(10, 2) FROM t'],
    ['IN (...) and EXISTS (...)', 'SELECT 1 FROM t WHERE a IN (1, 2) AND EXISTS (SELECT 1)'],
    ['an alias column list', 'SELECT * FROM (VALUES (1)) AS v(a)'],
    ['a CTE column list', 'WITH c(a) AS (SELECT 1) SELECT a FROM c'],
    ['window clauses', 'SELECT count(*) FILTER (WHERE a > 1) OVER (PARTITION BY b) FROM t'],
    ['EXPLAIN without ANALYZE', 'EXPLAIN SELECT now()'],
    ["other text literals, 'now' within a word", "SELECT 'nowhere', 'snow', 'Tomorrowland' FROM t"],
    ['a fixed date', "SELECT date '2024-01-01', 'epoch'::timestamptz"],
  ])('is false for %s', (_name, sql) => {
    expect(parseOne(sql).callsVolatileFunction).toBe(false);
  });
});

describe('unsupported statements', () => {
  it('COPY ... FROM STDIN is unsupported with a reason', () => {
    expect(parseOne('COPY t (a, b) FROM STDIN WITH (FORMAT csv)').unsupported).toBe(
      COPY_FROM_STDIN_REASON,
    );
  });

  it('COPY ... TO STDOUT is marked: it runs only as a streamed answer of its own', () => {
    expect(parseOne('COPY (SELECT * FROM t) TO STDOUT').unsupported).toBe(COPY_TO_STDOUT_REASON);
  });

  it('COPY to or from a server file is supported', () => {
    expect(parseOne("COPY t FROM '/data/t.csv'").unsupported).toBeNull();
    expect(parseOne("COPY t TO PROGRAM 'gzip > /tmp/t.gz'").unsupported).toBeNull();
  });

  it('other statements are supported', () => {
    expect(parseOne('SELECT 1').unsupported).toBeNull();
  });
});

describe('Unicode-escape identifiers (docs/decisions.md 10.15)', () => {
  it.each([
    `SELECT U&"set\\005fconfig"('role', 'x', false)`,
    `SELECT u&"pg\\005fadvisory\\005flock"(13)`,
    `SELECT U&"set!005fconfig" UESCAPE '!' ('search_path', 'x', false)`,
  ])('%s changes the session and is volatile', async (sql) => {
    await loadParser();
    const [statement] = parseSql(sql);
    expect(statement).toMatchObject({ changesSession: true, callsVolatileFunction: true });
  });
});
