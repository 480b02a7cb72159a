import request from 'supertest';
import { createTestApp, sql, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

beforeAll(async () => {
  testApp = createTestApp();
  await sql(
    'DROP TABLE IF EXISTS strategy_t; CREATE TABLE strategy_t (id int PRIMARY KEY, note text)',
  );
});
afterAll(() => testApp.close());
beforeEach(() => sql('TRUNCATE strategy_t'));

describe('several reads', () => {
  it('run in parallel: the three reads overlap in PostgreSQL, results in statement order', async () => {
    // Three pooled connections first, so that the reads start together.
    await query({ sql: 'SELECT 1; SELECT 2; SELECT 3' }).expect(200);
    // Each read notes, on PostgreSQL's clock, when it began and when its sleep ended.
    const read = (tag: string) =>
      `SELECT extract(epoch FROM clock_timestamp())::float8 AS began, pg_sleep(2), '${tag}' AS tag, ` +
      'extract(epoch FROM clock_timestamp())::float8 AS ended';
    const response = await query({ sql: `${read('a')}; ${read('b')}; ${read('c')};` }).expect(200);
    expect(response.body.multipleResults).toBe(true);
    expect(response.body).not.toHaveProperty('transactionUsed');
    const rows = response.body.results.map(
      (result: { rows: { began: number; ended: number; tag: string }[] }) => result.rows[0],
    );
    expect(rows.map((row: { tag: string }) => row.tag)).toEqual(['a', 'b', 'c']);
    // In sequence each would begin after the one before ended; in parallel each began before any
    // ended, however loaded the machine (unless it delayed one by the whole 2 s sleep).
    const lastBegan = Math.max(...rows.map((row: { began: number }) => row.began));
    const firstEnded = Math.min(...rows.map((row: { ended: number }) => row.ended));
    expect(lastBegan).toBeLessThan(firstEnded);
    const sum = response.body.results.reduce(
      (total: number, result: { executionTime: number }) => total + result.executionTime,
      0,
    );
    expect(response.body.totalExecutionTime).toBeLessThan(sum);
    expect(response.body.results[0].statement).toBe(`${read('a')};`);
  }, 30_000);

  it('report a failed read in its entry and answer 400 with One or more statements failed', async () => {
    const response = await query({
      sql: 'SELECT 1 AS a; SELECT * FROM no_such_table; SELECT 2 AS b',
    }).expect(400);
    expect(response.body.error).toBe('One or more statements failed');
    expect(response.body.results).toHaveLength(3);
    expect(response.body.results[0].rows).toEqual([{ a: 1 }]);
    expect(response.body.results[1]).toMatchObject({
      error: 'relation "no_such_table" does not exist',
      executionTime: expect.any(Number),
      cause: { code: '42P01', statementIndex: 1 },
    });
    expect(response.body.results[2].rows).toEqual([{ b: 2 }]);
  });
});

describe('writes', () => {
  it('run in one transaction and commit', async () => {
    const response = await query({
      sql: "INSERT INTO strategy_t VALUES (1, 'one'); UPDATE strategy_t SET note = 'uno' WHERE id = 1; SELECT note FROM strategy_t",
    }).expect(200);
    expect(response.body).toMatchObject({ multipleResults: true, transactionUsed: true });
    expect(response.body.results.map((result: { command: string }) => result.command)).toEqual([
      'INSERT',
      'UPDATE',
      'SELECT',
    ]);
    expect(response.body.results[2].rows).toEqual([{ note: 'uno' }]);
    expect(await sql('SELECT note FROM strategy_t')).toEqual([{ note: 'uno' }]);
  });

  it('roll back every statement when one fails, with the documented message, failedStatementIndex, results before it and cause', async () => {
    const response = await query({
      sql: "INSERT INTO strategy_t VALUES (1, 'one');\nINSERT INTO strategy_t VALUES (1, 'again');\nINSERT INTO strategy_t VALUES (3, 'three');",
    }).expect(400);
    expect(response.body.error).toBe(
      'Transaction failed at statement: INSERT INTO strategy_t VALUES (1, \'again\')... Error: duplicate key value violates unique constraint "strategy_t_pkey"',
    );
    expect(response.body).toMatchObject({
      transactionUsed: true,
      failedStatementIndex: 1,
      cause: {
        code: '23505',
        constraint: 'strategy_t_pkey',
        table: 'strategy_t',
        statementIndex: 1,
        location: { line: 2, column: 1 },
      },
    });
    expect(response.body.results).toHaveLength(1);
    expect(await sql('SELECT * FROM strategy_t')).toEqual([]);
  });

  it('reports a COMMIT that fails (a deferred constraint) as the transaction failing at COMMIT', async () => {
    await sql(
      'DROP TABLE IF EXISTS strategy_deferred; CREATE TABLE strategy_deferred (id int UNIQUE DEFERRABLE INITIALLY DEFERRED)',
    );
    const response = await query({
      sql: 'INSERT INTO strategy_deferred VALUES (1); INSERT INTO strategy_deferred VALUES (1)',
    }).expect(400);
    expect(response.body.error).toMatch(
      /^Transaction failed at statement: COMMIT\.\.\. Error: duplicate key value/,
    );
    expect(response.body).toMatchObject({ failedStatementIndex: 2, cause: { code: '23505' } });
    expect(response.body.results).toHaveLength(2);
    expect(await sql('SELECT * FROM strategy_deferred')).toEqual([]);
  });

  it('EXPLAIN ANALYZE INSERT with a failing SELECT leaves no row: it is a write, in the transaction', async () => {
    await query({ sql: 'EXPLAIN ANALYZE INSERT INTO strategy_t VALUES (1); SELECT 1/0;' }).expect(
      400,
    );
    expect(await sql('SELECT * FROM strategy_t')).toEqual([]);
  });
});

describe('scripts that manage their own transaction', () => {
  it('BEGIN; INSERT; COMMIT; runs as written and commits once', async () => {
    const response = await query({
      sql: "BEGIN; INSERT INTO strategy_t VALUES (1, 'x'); COMMIT;",
    }).expect(200);
    expect(response.body.transactionUsed).toBe(false);
    expect(response.body.results.map((result: { command: string }) => result.command)).toEqual([
      'BEGIN',
      'INSERT',
      'COMMIT',
    ]);
    expect(await sql('SELECT id FROM strategy_t')).toEqual([{ id: 1 }]);
  });

  it('BEGIN; INSERT left open is rolled back and reported, and the next request is fine', async () => {
    const response = await query({ sql: "BEGIN; INSERT INTO strategy_t VALUES (1, 'x')" }).expect(
      400,
    );
    expect(response.body).toMatchObject({
      rolledBack: true,
      error: expect.stringContaining('left a transaction open'),
    });
    expect(await sql('SELECT id FROM strategy_t')).toEqual([]);
    for (let i = 0; i < 3; i++) {
      const next = await query({ sql: 'SELECT 1 AS ok' }).expect(200);
      expect(next.body.rows).toEqual([{ ok: 1 }]);
    }
  });

  it('a lone BEGIN is rolled back and says so', async () => {
    const response = await query({ sql: 'BEGIN' }).expect(200);
    expect(response.body).toMatchObject({ command: 'BEGIN', rolledBack: true });
  });

  it('stops at the first failure and rolls back the failed transaction', async () => {
    const response = await query({
      sql: "BEGIN; INSERT INTO strategy_t VALUES (1, 'x'); SELECT 1/0; INSERT INTO strategy_t VALUES (2, 'y'); COMMIT;",
    }).expect(400);
    expect(response.body).toMatchObject({
      error: 'One or more statements failed',
      failedStatementIndex: 2,
      rolledBack: true,
    });
    expect(response.body.results).toHaveLength(3);
    expect(response.body.results[2].cause.code).toBe('22012');
    expect(await sql('SELECT id FROM strategy_t')).toEqual([]);
  });
});

describe('statements that cannot run in a transaction', () => {
  const database = `strategy_db_${process.pid}`;
  afterAll(() => sql(`DROP DATABASE IF EXISTS ${database}`));

  it('CREATE DATABASE x; SELECT 1 does not fail with 25001', async () => {
    const response = await query({ sql: `CREATE DATABASE ${database}; SELECT 1 AS one` }).expect(
      200,
    );
    expect(response.body).toMatchObject({ multipleResults: true, transactionUsed: false });
    expect(response.body.results[1].rows).toEqual([{ one: 1 }]);
  });

  it('VACUUM in a script runs in autocommit and the script stops at the first failure', async () => {
    const response = await query({ sql: 'VACUUM strategy_t; SELECT 1/0; SELECT 2' }).expect(400);
    expect(response.body).toMatchObject({ transactionUsed: false, failedStatementIndex: 1 });
    expect(response.body.results).toHaveLength(2);
    expect(response.body.results[0].command).toBe('VACUUM');
  });
});
