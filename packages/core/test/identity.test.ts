/**
 * Requests that run as a role (docs/decisions.md 12): what they may not hold, and how their
 * transaction or session is made to run as the role.
 */
import { RequestError } from '../src/errors';
import {
  capToIdentity,
  identitySetup,
  refuseBeyondIdentity,
  refuseUnusableRole,
  scopeAsIdentity,
} from '../src/identity';
import { planExecution } from '../src/execution/plan';
import { loadParser, parseSql, roleChangeIn } from '../src/parser';
import { UNLIMITED_ROWS, type QueryOptions, type RequestIdentity } from '../src/request';
import { defaults } from './execution/fixtures';

beforeAll(async () => {
  await loadParser();
});

function changeIn(sql: string): string | undefined {
  return roleChangeIn(parseSql(sql)[0]!);
}

function refusal(sql: string, identity: RequestIdentity): RequestError | undefined {
  try {
    refuseBeyondIdentity(parseSql(sql), identity);
    return undefined;
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
}

describe('roleChangeIn', () => {
  it.each([
    'SET ROLE app_login',
    'set local role x',
    'SET SESSION ROLE x',
    'SET role TO x',
    'SET "ROLE" = x',
    'RESET ROLE',
    'RESET ALL',
    'SET SESSION AUTHORIZATION app_login',
    'RESET SESSION AUTHORIZATION',
    "SET request.jwt.claims = '{}'",
    "SET LOCAL request.jwt.claims TO '{}'",
    "SELECT set_config('role', 'app_login', false)",
    "SELECT pg_catalog.set_config('ROLE', 'x', true)",
    "SELECT set_config('session_authorization', 'x', true)",
    'SELECT set_config(\'request.jwt.claims\', \'{"sub":"b"}\', true)',
    "SELECT set_config($1, 'x', true)",
    "SELECT set_config('ro' || 'le', 'x', true)",
    "SELECT U&\"set_config\"('role', 'x', true)",
    "WITH a AS (SELECT set_config('role', 'x', false)) SELECT * FROM a",
    "SELECT * FROM t WHERE set_config('role', 'x', true) IS NOT NULL",
    "UPDATE pg_settings SET setting = 'x' WHERE name = 'role'",
    'DISCARD ALL',
    'DO $$ BEGIN EXECUTE $x$RESET ROLE$x$; END $$',
    "CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $$ SELECT set_config('role', 'x', false) $$",
    'CREATE PROCEDURE p() LANGUAGE sql AS $$ SELECT 1 $$',
    'ALTER FUNCTION f() SET role = x',
    'ALTER ROLE web_anon SET role = app_login',
    'SET ROLE', // unreadable: the grammar refuses it, and its reach is unknown
    "SELECT query_to_xml('select set_config(''role'', ''x'', true)', true, false, '')",
    "SELECT pg_catalog.query_to_xmlschema('select 1', true, false, '')",
    "SELECT * FROM ts_stat('select to_tsvector(set_config(''role'', ''x'', true))')",
    "SELECT ts_rewrite('a'::tsquery, 'select 1')",
    "SELECT \"query_to_xml\"('select 1', true, false, '')",
    "CREATE AGGREGATE pg_temp.esc(text, boolean) (sfunc = pg_catalog.set_config, stype = text, initcond = 'role')",
    'CREATE OPERATOR pg_temp.### (function = set_config, leftarg = text, rightarg = text)',
    "SELECT set_config('app.x', '1', true), 'set_config'::regproc, set_config",
    "SELECT U&\"\\0071uery_to_xml\"('select 1', true, false, '')",
    'SELECT 1 FROM U&"t"',
    "CREATE AGGREGATE pg_temp.agg(text, boolean) (sfunc = 'set_config', stype = text, initcond = 'role')",
    "CREATE AGGREGATE pg_temp.agg(text, boolean) (sfunc = E'\\163et_config', stype = text)",
    "CREATE OPERATOR pg_temp.### (leftarg = tsquery, rightarg = text, procedure = 'ts_rewrite')",
    'CREATE CAST (text AS int) WITH FUNCTION f(text)',
    'SET LOCAL statement_timeout = 0',
    'SET standard_conforming_strings = off',
    "SELECT set_config('standard_conforming_strings', 'off', true)",
    'SET LOCAL backslash_quote TO on',
    "SET NAMES 'SJIS'",
    "SET client_encoding = 'BIG5'",
    "SELECT set_config('statement_timeout', '0', true)",
    `SELECT ${'('.repeat(3000)}set_config('role', 'x', true)${')'.repeat(3000)}`,
  ])('refuses %s', (sql) => {
    expect(changeIn(sql)).toEqual(expect.any(String));
  });

  it.each([
    'SELECT 1',
    "SELECT 'set role x', 'reset all'",
    'SELECT "set" FROM t',
    "SELECT set_config('app.tenant', '7', true)",
    "SELECT current_setting('request.jwt.claims', true)",
    'UPDATE t SET a = 1',
    'SET search_path = app',
    'DISCARD PLANS',
    'INSERT INTO t VALUES (1)',
  ])('lets %s run', (sql) => {
    expect(changeIn(sql)).toBeUndefined();
  });
});

describe('refuseBeyondIdentity', () => {
  const read: RequestIdentity = { role: 'web_anon', may: 'read' };
  const write: RequestIdentity = { role: 'web_anon', may: 'write' };
  const all: RequestIdentity = { role: 'web_anon', may: 'all' };

  it('lets reads-only credentials read, and refuses anything else as FORBIDDEN', () => {
    expect(refusal('SELECT * FROM t', read)).toBeUndefined();
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'CREATE TABLE x (a int)',
      'SET search_path = x',
    ]) {
      expect(refusal(sql, read)).toMatchObject({ code: 'FORBIDDEN' });
    }
    expect(refusal('BEGIN READ ONLY', read)).toBeUndefined();
    expect(refusal('BEGIN READ WRITE', read)).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('lets row-changing credentials change rows, and refuses DDL', () => {
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'UPDATE t SET a = 2',
      'DELETE FROM t',
      'SELECT 1',
      'COPY t FROM STDIN',
      'COPY (SELECT 1) TO STDOUT',
    ]) {
      expect(refusal(sql, write)).toBeUndefined();
    }
    for (const sql of [
      'CREATE TABLE x (a int)',
      'DROP TABLE t',
      'TRUNCATE t',
      'GRANT ALL ON t TO x',
      'SELECT * INTO TABLE pg_temp.x FROM t',
      'WITH a AS (SELECT 1) SELECT * INTO y FROM a',
      'EXPLAIN ANALYZE SELECT * INTO z FROM t',
      // EXPLAIN ANALYZE runs these, and PostgreSQL keeps their table even when READ ONLY.
      'EXPLAIN ANALYZE CREATE TABLE x AS SELECT 1',
      'EXPLAIN (ANALYZE) CREATE MATERIALIZED VIEW m AS SELECT 1',
      // A quoted option name, and the last of two ANALYZE options, as PostgreSQL reads them.
      'EXPLAIN ("analyze") CREATE TABLE x AS SELECT 1',
      'EXPLAIN (ANALYZE false, ANALYZE) SELECT 1 INTO y',
      // INTO in a branch of a set operation.
      'SELECT 1 INTO z UNION SELECT 2',
      '(SELECT 1 INTO z) EXCEPT SELECT 2',
      // A server file or program is more than rows.
      'COPY t TO PROGRAM \'psql -c "CREATE TABLE x ()"\'',
      "COPY t FROM '/etc/hostname'",
      'WITH a AS (SELECT 1 AS b) SELECT * INTO z FROM a UNION ALL SELECT 2',
    ]) {
      expect(refusal(sql, write)).toMatchObject({ code: 'FORBIDDEN' });
    }
    expect(refusal('SELECT * FROM t FOR UPDATE', write)).toBeUndefined();
    expect(refusal('EXPLAIN ANALYZE INSERT INTO t VALUES (1)', write)).toBeUndefined();
  });

  it('refuses a way out of the role whatever the credentials may run, naming the statement', () => {
    const error = refusal('SELECT 1; RESET ROLE', all);
    expect(error).toMatchObject({ code: 'FORBIDDEN', body: { statementIndex: 1 } });
    expect(error?.message).toMatch(/^Statement 1: /);
    expect(refusal('CREATE TABLE x (a int)', all)).toBeUndefined();
  });

  it("refuses currval() and lastval(), which read an earlier caller's sequence values", () => {
    for (const sql of ["SELECT currval('s')", 'SELECT lastval()', 'SELECT "lastval"()']) {
      expect(refusal(sql, all)).toMatchObject({ code: 'FORBIDDEN' });
    }
    expect(refusal("SELECT 'lastval'", all)).toBeUndefined();
  });

  it('refuses a role PostgreSQL cannot hold', () => {
    for (const role of ['', 'a\0b', 'x'.repeat(64), 'é'.repeat(32)]) {
      expect(() => refuseUnusableRole({ role, may: 'all' })).toThrow(RequestError);
    }
    expect(() => refuseUnusableRole({ role: 'x'.repeat(63), may: 'all' })).not.toThrow();
  });
});

describe('identitySetup', () => {
  it('quotes the role as an identifier and the claims as a literal that reads alike with any setting', () => {
    const setup = identitySetup(
      { role: 'we"ird', claims: '{"sub":"o\'neil\\\\x"}', may: 'all' },
      'transaction',
    );
    expect(setup).toEqual([
      'SET LOCAL ROLE "we""ird"',
      `SET LOCAL request.jwt.claims = E'{"sub":"o''neil\\\\\\\\x"}'`,
    ]);
    for (const statement of setup) expect(parseSql(statement)).toHaveLength(1);
  });

  it('sets a session for good, READ ONLY by default for reads-only credentials', () => {
    expect(identitySetup({ role: 'r', may: 'read' }, 'session')).toEqual([
      'SET ROLE "r"',
      'SET default_transaction_read_only = on',
    ]);
    expect(identitySetup({ may: 'all' }, 'session')).toEqual([]);
  });
});

describe('planning a request with an identity', () => {
  it('runs everything in one transaction of its own, READ ONLY for reads-only credentials', () => {
    const identity: RequestIdentity = { role: 'r', may: 'read' };
    const one = planExecution(parseSql('SELECT 1'), defaults, { identity });
    expect(one).toMatchObject({
      strategy: 'transaction',
      shape: 'single',
      transaction: { readOnly: true, identity },
    });
    const reads = planExecution(parseSql('SELECT 1; SELECT 2'), defaults, {
      identity: { may: 'all' },
    });
    expect(reads).toMatchObject({ strategy: 'transaction', shape: 'multiple' });
    expect(reads.transaction.readOnly).toBe(false);
  });

  it('refuses transaction control: the transaction is the service own', () => {
    expect(() =>
      planExecution(parseSql('BEGIN; SELECT 1; COMMIT'), defaults, { identity: { may: 'all' } }),
    ).toThrow(RequestError);
  });
});

it('scopes cached results by role and claims', () => {
  const scope = { server: 's', database: 'd', credentials: 'c' };
  const a = scopeAsIdentity(scope, { role: 'web', claims: '{"sub":"a"}', may: 'read' });
  const b = scopeAsIdentity(scope, { role: 'web', claims: '{"sub":"b"}', may: 'read' });
  const other = scopeAsIdentity(scope, { role: 'admin', claims: '{"sub":"a"}', may: 'read' });
  expect(new Set([a.credentials, b.credentials, other.credentials, scope.credentials]).size).toBe(
    4,
  );
  expect(a).toMatchObject({ server: 's', database: 'd' });
});

describe('capToIdentity', () => {
  const identity: RequestIdentity = { may: 'all', maxRows: 100, timeoutMs: 5000 };
  const options = (more: Partial<QueryOptions> = {}): QueryOptions => ({
    rowMode: 'object',
    readOnly: false,
    dryRun: false,
    ...more,
  });

  it("gives a request the identity's caps when it asks for none, or for no row limit", () => {
    for (const asked of [options(), options({ maxRows: UNLIMITED_ROWS })]) {
      capToIdentity(asked, identity);
      expect(asked).toMatchObject({ maxRows: 100, timeoutMs: 5000 });
    }
  });

  it('keeps what a request asks for within the caps, and refuses more', () => {
    const within = options({ maxRows: 10, timeoutMs: 10 });
    capToIdentity(within, identity);
    expect(within).toMatchObject({ maxRows: 10, timeoutMs: 10 });
    expect(() => capToIdentity(options({ maxRows: 101 }), identity)).toThrow(/at most 100/);
    expect(() => capToIdentity(options({ timeoutMs: 5001 }), identity)).toThrow(/at most 5000/);
  });
});
