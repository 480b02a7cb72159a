/** docs/decisions.md 3: the request extensions, through HTTP against PostgreSQL. */
import request from 'supertest';
import { createTestApp, sql, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

beforeAll(async () => {
  testApp = createTestApp();
  await sql('DROP TABLE IF EXISTS extension_t; CREATE TABLE extension_t (id int, note text)');
});
afterAll(() => testApp.close());
beforeEach(() => sql('TRUNCATE extension_t'));

describe('params', () => {
  it('binds values to $1..$n, strings byte for byte', async () => {
    const note = "it's  -- not a comment ; \\n";
    await query({ sql: 'INSERT INTO extension_t VALUES ($1, $2)', params: [7, note] }).expect(200);
    expect(await sql('SELECT id, note FROM extension_t')).toEqual([{ id: 7, note }]);
  });
});

describe('timeoutMs', () => {
  it('cancels the statement in PostgreSQL with 57014 and answers 504', async () => {
    // 57014: cancelled, not waited out.
    const response = await query({ sql: 'SELECT pg_sleep(10)', timeoutMs: 300 }).expect(504);
    expect(response.body.error.code).toBe('57014');
  });

  it('applies to every statement of a transaction', async () => {
    const response = await query({
      sql: 'INSERT INTO extension_t VALUES (1); SELECT pg_sleep(10)',
      timeoutMs: 300,
    }).expect(504);
    expect(response.body.cause.code).toBe('57014');
    expect(await sql('SELECT * FROM extension_t')).toEqual([]);
  });

  it('does not outlive the request', async () => {
    await query({ sql: 'SELECT 1', timeoutMs: 50 }).expect(200);
    const response = await query({
      sql: "SELECT pg_sleep(0.2), current_setting('statement_timeout') AS timeout",
    }).expect(200);
    expect(response.body.rows[0].timeout).toBe('0');
  });
});

describe('maxRows', () => {
  it('returns the first MAX_ROWS rows of generate_series(1, 5000000) with truncated: true', async () => {
    const response = await query({ sql: 'SELECT generate_series(1, 5000000) AS n' }).expect(200);
    expect(response.body.rows).toHaveLength(10000);
    expect(response.body.rows[9999]).toEqual({ n: 10000 });
    expect(response.body.truncated).toBe(true);
  });

  it('honours a request maxRows and says nothing when the result fits', async () => {
    const cut = await query({ sql: 'SELECT generate_series(1, 10) AS n', maxRows: 3 }).expect(200);
    expect(cut.body).toMatchObject({ rows: [{ n: 1 }, { n: 2 }, { n: 3 }], truncated: true });
    const whole = await query({ sql: 'SELECT generate_series(1, 3) AS n', maxRows: 3 }).expect(200);
    expect(whole.body.rows).toHaveLength(3);
    expect(whole.body).not.toHaveProperty('truncated');
    expect(whole.body.rowCount).toBe(3);
  });
});

describe('rowMode', () => {
  it("'array' keeps both values of columns that share a name", async () => {
    const response = await query({ sql: 'SELECT 1 AS a, 2 AS a', rowMode: 'array' }).expect(200);
    expect(response.body.rows).toEqual([[1, 2]]);
    expect(response.body.fields.map((field: { name: string }) => field.name)).toEqual(['a', 'a']);
  });
});

describe('readOnly', () => {
  it('runs writes in a READ ONLY transaction: they fail with 25006', async () => {
    const response = await query({
      sql: 'INSERT INTO extension_t VALUES (1)',
      readOnly: true,
    }).expect(400);
    expect(response.body.error.code).toBe('25006');
    expect(await sql('SELECT * FROM extension_t')).toEqual([]);
  });

  it('lets reads through', async () => {
    const response = await query({
      sql: 'SELECT 1 AS one; SELECT 2 AS two',
      readOnly: true,
    }).expect(200);
    expect(response.body.results[1].rows).toEqual([{ two: 2 }]);
  });

  it('refuses session statements that could switch the transaction to read-write', async () => {
    await query({
      sql: 'SET transaction_read_only = off; INSERT INTO extension_t VALUES (1)',
      readOnly: true,
    }).expect(400);
    expect(await sql('SELECT * FROM extension_t')).toEqual([]);
  });
});

describe('isolationLevel', () => {
  it('sets the isolation level of the transaction the service opens', async () => {
    const response = await query({
      sql: 'INSERT INTO extension_t VALUES (1); SHOW transaction_isolation',
      isolationLevel: 'serializable',
    }).expect(200);
    expect(response.body.results[1].rows).toEqual([{ transaction_isolation: 'serializable' }]);
  });

  it('rejects an unknown level', async () => {
    await query({ sql: 'SELECT 1', isolationLevel: 'chaos' }).expect(400);
  });
});

describe('dryRun', () => {
  it('shows the results and keeps nothing', async () => {
    const response = await query({
      sql: "INSERT INTO extension_t VALUES (1, 'a'); SELECT count(*)::int AS n FROM extension_t",
      dryRun: true,
    }).expect(200);
    expect(response.body).toMatchObject({ rolledBack: true, transactionUsed: true });
    expect(response.body.results[1].rows).toEqual([{ n: 1 }]);
    expect(await sql('SELECT * FROM extension_t')).toEqual([]);
  });

  it('works for a single statement', async () => {
    const response = await query({
      sql: 'INSERT INTO extension_t VALUES (1) RETURNING id',
      dryRun: true,
    }).expect(200);
    expect(response.body).toMatchObject({ rows: [{ id: 1 }], rolledBack: true });
    expect(await sql('SELECT * FROM extension_t')).toEqual([]);
  });
});

describe('Server-Timing', () => {
  it('reports pool wait, execution and serialisation', async () => {
    const response = await query({ sql: 'SELECT 1' }).expect(200);
    expect(response.headers['server-timing']).toMatch(
      /^pool;dur=[0-9.]+, exec;dur=[0-9.]+, ser;dur=[0-9.]+$/,
    );
  });
});
