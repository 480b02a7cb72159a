/** docs/decisions.md 5: every status code POST /api/query can produce, each with its body. */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { eventually } from '@sqlgate/testing';
import request from 'supertest';
import { createTestApp, directClient, sql, target, type TestApp } from './support';

let testApp: TestApp;
const post = (body: unknown) =>
  request(testApp.app)
    .post('/api/query')
    .send(body as object);
const query = (body: Record<string, unknown>) => post(target(body));

beforeAll(() => {
  testApp = createTestApp();
});
afterAll(() => testApp.close());

describe('400', () => {
  it('invalid JSON', async () => {
    const response = await request(testApp.app)
      .post('/api/query')
      .set('content-type', 'application/json')
      .send('{"host": ')
      .expect(400);
    expect(response.body).toEqual({ error: 'Request body is not valid JSON' });
  });

  it('missing required fields, naming them', async () => {
    const response = await post({ host: 'localhost', sql: 'SELECT 1' }).expect(400);
    expect(response.body).toEqual({
      error: 'Missing required fields',
      missing: ['port', 'user', 'database'],
    });
  });

  it('a wrong field type', async () => {
    const response = await query({ sql: { text: 'SELECT 1' } }).expect(400);
    expect(response.body).toEqual({ error: "'sql' must be a string" });
    await query({ port: 'abc', sql: 'SELECT 1' }).expect(400, {
      error: "'port' must be an integer from 1 to 65535",
    });
  });

  it('no statements after parsing', async () => {
    const response = await query({ sql: ' ;; -- only a comment\n/* and another */' }).expect(400);
    expect(response.body).toEqual({ error: 'No valid SQL statements found' });
  });

  it('params with several statements', async () => {
    const response = await query({ sql: 'SELECT $1; SELECT 2', params: [1] }).expect(400);
    expect(response.body.error).toMatch(/params/);
  });

  it('a Unix socket as host', async () => {
    await query({ host: '/var/run/postgresql', sql: 'SELECT 1' }).expect(400);
  });

  it('COPY FROM STDIN, pointing at POST /api/copy', async () => {
    const response = await query({ sql: 'COPY pg_class FROM STDIN' }).expect(400);
    expect(response.body.error).toMatch(/POST \/api\/copy/);
  });

  it('an SQL error, with every field and where it is in the submitted text', async () => {
    const response = await query({
      sql: 'SELECT 1;\n\n  SELECT   no_such_column FROM pg_class',
    }).expect(400);
    expect(response.body.results[1].cause).toMatchObject({
      message: 'column "no_such_column" does not exist',
      code: '42703',
      severity: 'ERROR',
      routine: expect.any(String),
      // PostgreSQL's own position, in the statement as submitted (decisions 10.9).
      position: '10',
      statementIndex: 1,
      location: { line: 3, column: 12 },
    });
    const single = await query({ sql: '\n  SELEC 1' }).expect(400);
    expect(single.body.error).toMatchObject({
      code: '42601',
      statementIndex: 0,
      location: { line: 2, column: 3 },
    });
    expect(typeof single.body.error.executionTime).toBe('number');
  });

  it('authentication failure (28P01) and unknown database (3D000) are 400, not 401', async () => {
    const wrongPassword = await query({ password: 'wrong', sql: 'SELECT 1' }).expect(400);
    expect(wrongPassword.body.error.code).toBe('28P01');
    const unknownDatabase = await query({ database: 'no_such_database', sql: 'SELECT 1' }).expect(
      400,
    );
    expect(unknownDatabase.body.error.code).toBe('3D000');
  });
});

it('409 for a serialization failure or deadlock: the caller may retry', async () => {
  const response = await query({
    sql: "DO $$ BEGIN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END $$",
  }).expect(409);
  expect(response.body.error.code).toBe('40001');
});

it('413 for a body larger than MAX_BODY_BYTES', async () => {
  const small = createTestApp({ maxBodyBytes: 100 });
  try {
    const response = await request(small.app)
      .post('/api/query')
      .send(target({ sql: `SELECT '${'x'.repeat(200)}'` }))
      .expect(413);
    expect(response.body).toEqual({ error: 'Request body too large' });
  } finally {
    await small.close();
  }
});

it('404 for an unknown path and 405 with Allow for a wrong method, as JSON', async () => {
  const missing = await request(testApp.app).get('/api/nothing').expect(404);
  expect(missing.body.error).toMatch(/Not found/);
  const wrongMethod = await request(testApp.app).get('/api/query').expect(405);
  expect(wrongMethod.headers.allow).toBe('POST');
  expect(wrongMethod.body.error).toMatch(/not allowed/);
});

describe('502, 503, 504', () => {
  it('502 with a code when nothing listens on the target port', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const response = await query({ host: '127.0.0.1', port, sql: 'SELECT 1' }).expect(502);
    expect(response.body).toEqual({ error: { message: expect.any(String), code: 'ECONNREFUSED' } });
  });

  it('502 when the server is shutting down the connection (57P01)', async () => {
    const response = await query({
      sql: "DO $$ BEGIN RAISE EXCEPTION 'terminating connection due to administrator command' USING ERRCODE = '57P01'; END $$",
    }).expect(502);
    expect(response.body.error.code).toBe('57P01');
  });

  it('503 with Retry-After when no pooled connection frees up in time', async () => {
    const tiny = createTestApp({ poolMax: 1, poolWaitTimeoutMs: 200 });
    // The one connection waits for a lock the test holds until the refusal came.
    const holder = await directClient();
    await holder.query('SELECT pg_advisory_lock(4747)');
    try {
      const slow = request(tiny.app)
        .post('/api/query')
        .send(target({ sql: 'SELECT 1 FROM pg_advisory_xact_lock_shared(4747)' }));
      const slowDone = slow.then((response) => response.status);
      await eventually(
        async () => {
          const { rows } = await holder.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock_shared(4747)%'",
          );
          return rows.length === 1;
        },
        { withinMs: 45_000 },
      );
      const response = await request(tiny.app)
        .post('/api/query')
        .send(target({ sql: 'SELECT 1' }))
        .expect(503);
      expect(response.headers['retry-after']).toBeDefined();
      expect(response.body.error.code).toBe('POOL_EXHAUSTED');
      await holder.query('SELECT pg_advisory_unlock(4747)');
      expect(await slowDone).toBe(200);
    } finally {
      await holder.end();
      await tiny.close();
    }
  }, 60_000);

  it('503 for too many connections (53300)', async () => {
    const response = await query({
      sql: "DO $$ BEGIN RAISE EXCEPTION 'too many connections' USING ERRCODE = '53300'; END $$",
    }).expect(503);
    expect(response.headers['retry-after']).toBeDefined();
  });

  it('504 for a statement timeout, and the statement is gone from pg_stat_activity', async () => {
    const response = await query({
      sql: 'SELECT pg_sleep(5) /* timeout-probe */',
      timeoutMs: 200,
    }).expect(504);
    expect(response.body.error).toMatchObject({
      code: '57014',
      message: 'canceling statement due to statement timeout',
    });
    const running = await sql(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(5)%'",
    );
    expect(running).toEqual([{ n: 0 }]);
  });

  it('504 with ETIMEDOUT when the target accepts and never answers', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const quick = createTestApp({ connectTimeoutMs: 300 });
    try {
      const response = await request(quick.app)
        .post('/api/query')
        .send(target({ host: '127.0.0.1', port, sql: 'SELECT 1' }))
        .expect(504);
      expect(response.body).toEqual({ error: { message: expect.any(String), code: 'ETIMEDOUT' } });
    } finally {
      await quick.close();
      silent.close();
    }
  });
});

it('every error body is JSON', async () => {
  const responses = await Promise.all([
    post('not an object'),
    query({ sql: 'SELECT 1/0' }),
    request(testApp.app).delete('/api/query'),
  ]);
  for (const response of responses)
    expect(response.headers['content-type']).toMatch(/application\/json/);
});
