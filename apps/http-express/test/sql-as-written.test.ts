/**
 * Decisions 10.9-10.12: what reaches PostgreSQL is what the caller wrote, an incomplete text or a
 * NUL never reaches it, and the split follows the target's standard_conforming_strings.
 */
import request from 'supertest';
import { createTestApp, directClient, sql, target, type TestApp } from './support';

let testApp: TestApp;
const post = (path: string, body: Record<string, unknown>) =>
  request(testApp.app).post(path).send(body);
const query = (body: Record<string, unknown>) => post('/api/query', target(body));

beforeAll(() => {
  testApp = createTestApp();
});
afterAll(() => testApp.close());

/** Nothing listens there: a request that got as far as connecting would answer 502. */
const UNREACHABLE = { host: '127.0.0.1', port: 1 };

describe('statements run as written (10.9)', () => {
  const selfQuery = 'query FROM pg_stat_activity WHERE pid = pg_backend_pid()';

  it('an optimizer hint inside the statement reaches PostgreSQL', async () => {
    const statement = `SELECT /*+ SeqScan(people) */ ${selfQuery}`;
    const response = await query({ sql: `${statement};` }).expect(200);
    expect(response.body.rows).toEqual([{ query: statement }]);
    expect(response.body.statement).toBe(`SELECT ${selfQuery};`);
  });

  it('a hint before the first keyword is sent with its statement, as psql sends it', async () => {
    const statement = `/*+ SeqScan(people) */\n  SELECT ${selfQuery}`;
    const response = await query({ sql: `-- a note\n${statement}` }).expect(200);
    expect(response.body.rows).toEqual([{ query: statement }]);
  });

  it('every statement of a script is sent as written, not only the first', async () => {
    const second = `SELECT /* two */ ${selfQuery}`;
    const response = await query({
      sql: `CREATE TEMP TABLE written_probe (x int);\n${second};`,
    }).expect(200);
    expect(response.body.results[1].rows).toEqual([{ query: second }]);
  });

  it('the error location of a syntax error after comments points into the submitted text', async () => {
    const response = await query({
      sql: 'SELECT 1;\n/* first line\n   second line */ SELECT /* x */ 1 +\n    FROM nowhere',
    }).expect(400);
    const cause = response.body.results[1].cause;
    expect(cause).toMatchObject({ code: '42601', statementIndex: 1 });
    expect(cause.message).toBe('syntax error at or near "FROM"');
    expect(cause.location).toEqual({ line: 4, column: 5 });
  });

  it('an error position past astral characters maps to the right column', async () => {
    const response = await query({ sql: "SELECT '😀😀' AS a, /* 😀 */\n  no_such_column" }).expect(
      400,
    );
    expect(response.body.error).toMatchObject({
      code: '42703',
      location: { line: 2, column: 3 },
    });
  });
});

describe('unterminated text is refused before any connection (10.10)', () => {
  it.each([
    ["SELECT 1;\nSELECT 'abc", 'string', 2, 8],
    ["SELECT E'abc\\'", 'string', 1, 8],
    ['SELECT 1 AS "abc', 'quoted identifier', 1, 13],
    ['DO $body$ BEGIN NULL; END $$', 'dollar-quoted string', 1, 4],
    ['SELECT 1 /* a /* b */', 'block comment', 1, 10],
  ])('%j: 400 naming the %s and where it starts', async (text, what, line, column) => {
    const response = await query({ ...UNREACHABLE, sql: text }).expect(400);
    expect(response.body).toEqual({
      error: `Unterminated ${what} starting at line ${line}, column ${column}`,
      location: { line, column },
    });
  });

  it('a megabyte of /* answers 400 at once and leaves no backend busy', async () => {
    const started = Date.now();
    const response = await query({ sql: '/*'.repeat(500_000) }).expect(400);
    // A scan that went back over the text for each /* would take hours; one pass, milliseconds.
    // The bound tells the two apart on any machine, however loaded.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(response.body.error).toBe('Unterminated block comment starting at line 1, column 1');
    const [busy] = await sql(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '/*/*%'",
    );
    expect(busy).toEqual({ n: 0 });
  }, 30_000);
});

describe('whitespace as PostgreSQL 15 reads it (10.11)', () => {
  it('SELECT\\v1 reaches PostgreSQL as written and fails there', async () => {
    const response = await query({ sql: 'SELECT\v1' }).expect(400);
    expect(response.body.error).toMatchObject({
      code: '42601',
      location: { line: 1, column: 7 },
    });
    expect(response.body.error.message).toMatch(/^syntax error at or near/);
  });
});

describe('NUL characters and lone surrogates are refused before connecting (10.12)', () => {
  it('a NUL in user cannot add startup options: 400, and nothing is sent', async () => {
    const response = await query({
      user: 'trustuser\u0000options\u0000-c work_mem=777kB',
      sql: 'SHOW work_mem',
    }).expect(400);
    expect(response.body).toEqual({
      error: "'user' contains a NUL character (U+0000), which PostgreSQL cannot receive",
    });
  });

  it.each(['host', 'password', 'database', 'sslMode'])('a NUL in %s', async (field) => {
    const response = await query({ [field]: 'x\u0000y', sql: 'SELECT 1' }).expect(400);
    expect(response.body.error).toBe(
      `'${field}' contains a NUL character (U+0000), which PostgreSQL cannot receive`,
    );
  });

  it('a NUL in the connection test fields too', async () => {
    const response = await post('/api/test-connection', {
      ...target(),
      user: 'trustuser\u0000replication\u0000true',
    }).expect(400);
    expect(response.body).toEqual({
      success: false,
      error: {
        message: "'user' contains a NUL character (U+0000), which PostgreSQL cannot receive",
        code: 'INVALID_REQUEST',
      },
    });
  });

  it('a NUL in sql is a 400, not a broken connection', async () => {
    const response = await query({ ...UNREACHABLE, sql: 'SELECT 1\u0000; SELECT 2' }).expect(400);
    expect(response.body.error).toBe(
      "'sql' contains a NUL character (U+0000), which PostgreSQL cannot receive",
    );
  });

  it('a NUL in a parameter, however deep, names where it is', async () => {
    const response = await query({
      ...UNREACHABLE,
      sql: 'SELECT $1::jsonb, $2::text[]',
      params: [{ a: [{ 'b c': 'x\u0000' }] }, ['y']],
    }).expect(400);
    expect(response.body.error).toBe(
      '\'params[0].a[0]["b c"]\' contains a NUL character (U+0000), which PostgreSQL cannot receive',
    );
  });

  it('a lone surrogate in sql or params is refused, never replaced', async () => {
    const inSql = await query({ ...UNREACHABLE, sql: "SELECT '😀\ud800'" }).expect(400);
    expect(inSql.body.error).toBe(
      "'sql' contains a lone UTF-16 surrogate (U+D800) at character 10, which is not valid Unicode",
    );
    const inParams = await query({ ...UNREACHABLE, sql: 'SELECT $1', params: ['a\udc00'] }).expect(
      400,
    );
    expect(inParams.body.error).toBe(
      "'params[0]' contains a lone UTF-16 surrogate (U+DC00) at character 2, which is not valid Unicode",
    );
  });

  it('a surrogate pair is a character like any other', async () => {
    const response = await query({ sql: 'SELECT $1::text AS v', params: ['😀'] }).expect(200);
    expect(response.body.rows).toEqual([{ v: '😀' }]);
  });

  it('params nested 10,000 levels deep are a 400, not a crash', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const body = JSON.stringify(target({ sql: 'SELECT $1', ...UNREACHABLE })).replace(
      /}$/,
      `, "params": [${deep}]}`,
    );
    const response = await request(testApp.app)
      .post('/api/query')
      .set('content-type', 'application/json')
      .send(body)
      .expect(400);
    expect(response.body.error).toMatch(/^'params' are nested more than 32 levels deep/);
  });

  it('params nested 32 levels deep still run; 33 levels are refused', async () => {
    const nested = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { a: value };
      return value;
    };
    const response = await query({
      sql: 'SELECT $1::jsonb AS v',
      params: [nested(32)],
    }).expect(200);
    expect(response.body.rows[0].v).toEqual(nested(32));
    await query({ sql: 'SELECT $1::jsonb AS v', params: [nested(33)] }).expect(400);
  });
});

describe('a target with standard_conforming_strings off (10.11)', () => {
  const databaseName = `scs_off_${process.pid}`;

  beforeAll(async () => {
    const admin = await directClient();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${databaseName}`);
      await admin.query(`CREATE DATABASE ${databaseName}`);
      await admin.query(`ALTER DATABASE ${databaseName} SET standard_conforming_strings = off`);
    } finally {
      await admin.end();
    }
  });

  afterAll(async () => {
    // The pools first: dropping the database ends their connections. Closing twice is harmless.
    await testApp.close();
    const admin = await directClient();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  const legacy = (sqlText: string) => query({ database: databaseName, sql: sqlText });

  // Sent as written, this one no longer depends on the split: it runs right on either setting.
  it("a backslash escapes the quote: 'a\\'   ' keeps its spaces, as psql shows", async () => {
    const response = await legacy("SELECT 'a\\'   ' AS v --'").expect(200);
    expect(response.body.rows).toEqual([{ v: "a'   " }]);
  });

  // The adapter reports the setting from the server's ParameterStatus at login.
  it("'x\\'  ; SELECT 1 --' is one statement, not two", async () => {
    const response = await legacy("SELECT 'x\\'  ; SELECT 1 --' AS v").expect(200);
    expect(response.body.multipleResults).toBeUndefined();
    expect(response.body.rows).toEqual([{ v: "x'  ; SELECT 1 --" }]);
  });

  it('a text without backslashes in plain strings runs the same on either setting', async () => {
    const response = await legacy("SELECT E'a\\'b' AS v; SELECT 'c' AS w").expect(200);
    expect(response.body.results.map((result: { rows: unknown[] }) => result.rows)).toEqual([
      [{ v: "a'b" }],
      [{ w: 'c' }],
    ]);
  });
});
