/**
 * Never lie, never hang (docs/decisions.md 10.2 and 10.4–10.8), against a real PostgreSQL: limits
 * change what is returned, never what runs; a lost connection or a frozen backend gives an answer
 * that says what committed; a caller that goes away stops the script; caller mistakes are 400 and
 * defects are a 500 without detail. Each test is named after what the service once did wrong.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createQueryService, type ConnectionProvider } from '@sqlgate/core';
import { eventually } from '@sqlgate/testing';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../src/app';
import { createTestApp, database, directClient, sql, target, type TestApp } from './support';

const describeWithLocalCluster = database.source === 'local-cluster' ? describe : describe.skip;
/** The parts of an answer these tests read. */
interface AnswerBody {
  multipleResults?: boolean;
  failedStatementIndex?: number;
  results: { error?: string; cause?: Record<string, unknown> }[];
  error?: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app)
    .post('/api/query')
    .send({ ...target(), ...body });

beforeAll(async () => {
  testApp = createTestApp({ maxResultBytes: 1024 * 1024 });
  await sql(`
    DROP TABLE IF EXISTS honest_audit, honest_items, honest_log;
    CREATE TABLE honest_audit (g int);
    CREATE TABLE honest_items (id int PRIMARY KEY, v text);
    CREATE TABLE honest_log (n int);
    INSERT INTO honest_items SELECT g, 'x' FROM generate_series(1, 50) g;
    CREATE OR REPLACE FUNCTION honest_audited(g int) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO honest_audit VALUES (g); RETURN g; END $$;
    CREATE OR REPLACE FUNCTION honest_stubborn_sleep(seconds float8) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_sleep(seconds);
        RETURN 1;
      EXCEPTION WHEN query_canceled THEN
        RETURN 0; -- swallows the cancel: only sqlgate's own checks can stop what follows
      END $$;
  `);
});
afterAll(() => testApp.close());

/** Polls pg_stat_activity for the backend running a statement that starts with `prefix`. */
async function backendRunning(prefix: string, withinMs = 30_000): Promise<number> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const rows = await sql(
      `SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid() AND state = 'active'`,
      [`${prefix}%`],
    );
    if (rows[0]) return rows[0].pid as number;
    if (Date.now() > deadline) throw new Error(`no backend runs ${prefix}`);
    await sleep(20);
  }
}

describe('limits change what is returned, never what runs (10.4)', () => {
  it('runs every row of a read that calls a user function, whatever maxRows', async () => {
    await sql('TRUNCATE honest_audit');
    const { body } = await query({
      sql: 'SELECT honest_audited(g) FROM generate_series(1, 100) g',
      maxRows: 5,
    }).expect(200);
    expect(body.rows).toHaveLength(5);
    expect(body).toMatchObject({
      truncated: true,
      truncatedBy: 'rows',
      rowCount: 100,
      command: 'SELECT',
    });
    expect(await sql('SELECT count(*)::int AS n FROM honest_audit')).toEqual([{ n: 100 }]);
  });

  it('reports the command tag of UPDATE ... RETURNING cut by maxRows', async () => {
    const { body } = await query({
      sql: "UPDATE honest_items SET v = 'u' RETURNING id",
      maxRows: 1,
    }).expect(200);
    expect(body).toMatchObject({
      rowCount: 50,
      command: 'UPDATE',
      truncated: true,
      truncatedBy: 'rows',
    });
    expect(body.rows).toHaveLength(1);
    expect(await sql("SELECT count(*)::int AS n FROM honest_items WHERE v = 'u'")).toEqual([
      { n: 50 },
    ]);
  });

  it('runs a read of a view to its end: the view may call a function with side effects', async () => {
    await sql(`
      TRUNCATE honest_audit;
      CREATE OR REPLACE VIEW honest_audited_view AS
        SELECT honest_audited(g) AS x FROM generate_series(1, 100) g;
    `);
    const { body } = await query({ sql: 'SELECT * FROM honest_audited_view', maxRows: 1 }).expect(
      200,
    );
    expect(body).toMatchObject({ rowCount: 100, truncatedBy: 'rows' });
    expect(await sql('SELECT count(*)::int AS n FROM honest_audit')).toEqual([{ n: 100 }]);
  });

  it('still stops a plain read early at maxRows', async () => {
    const { body } = await query({
      sql: 'SELECT generate_series(1, 100000000) AS g',
      maxRows: 3,
    }).expect(200);
    expect(body).toMatchObject({ rows: [{ g: 1 }, { g: 2 }, { g: 3 }], truncatedBy: 'rows' });
  });
});

describe('results are bounded in bytes (10.2)', () => {
  it('cuts a read at MAX_RESULT_BYTES and says so', async () => {
    const { body } = await query({
      sql: "SELECT repeat('x', 100000) AS big FROM generate_series(1, 480)",
    }).expect(200);
    expect(body).toMatchObject({ truncated: true, truncatedBy: 'bytes' });
    expect(body.rows.length).toBeGreaterThan(0);
    expect(body.rows.length).toBeLessThan(11);
  });

  it('shares the bound among the statements of one request', async () => {
    const { body } = await query({
      sql: "SELECT repeat('a', 400000) FROM generate_series(1, 2); SELECT repeat('b', 400000) FROM generate_series(1, 2)",
    }).expect(200);
    const kept = body.results.map((result: { rows: unknown[] }) => result.rows.length);
    expect(kept[0] + kept[1]).toBeLessThan(4);
    // The two reads run at once (the parallel path): the one the bound cuts is the one whose rows
    // come last, which the machine decides.
    expect(body.results).toContainEqual(
      expect.objectContaining({ truncated: true, truncatedBy: 'bytes' }),
    );
  });

  it('runs a write to its end past the bound and reports its tag', async () => {
    await sql('TRUNCATE honest_log');
    const { body } = await query({
      sql: "INSERT INTO honest_log SELECT g FROM generate_series(1, 40) g RETURNING n, repeat('y', 100000) AS pad",
    }).expect(200);
    expect(body).toMatchObject({ command: 'INSERT', rowCount: 40, truncatedBy: 'bytes' });
    expect(await sql('SELECT count(*)::int AS n FROM honest_log')).toEqual([{ n: 40 }]);
  });

  it('leaves no trace on the connection: the next statement on it is not truncated', async () => {
    const onePool = createTestApp({ maxResultBytes: 1024 * 1024, poolMax: 1 });
    try {
      const send = (sqlText: string) =>
        request(onePool.app)
          .post('/api/query')
          .send({ ...target(), sql: sqlText });
      const big = await send("SELECT repeat('x', 100000) FROM generate_series(1, 480)").expect(200);
      expect(big.body.truncatedBy).toBe('bytes');
      for (const sqlText of ['INSERT INTO honest_log VALUES (1)', 'SELECT 1 AS one']) {
        const next = await send(sqlText).expect(200);
        expect(next.body).not.toHaveProperty('truncated');
      }
    } finally {
      await onePool.close();
    }
  });

  it('counts the column names of object rows in the bound', async () => {
    const longName = 'c'.repeat(60);
    const { body } = await query({
      sql: `SELECT 1 AS ${longName} FROM generate_series(1, 100000)`,
      maxRows: 100000,
    }).expect(200);
    expect(body).toMatchObject({ truncated: true, truncatedBy: 'bytes' });
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThan(3 * 1024 * 1024);
  });

  it('drops a single row larger than the whole bound without reading it', async () => {
    const { body } = await query({ sql: "SELECT 1 AS a, repeat('z', 3000000) AS b" }).expect(200);
    expect(body).toMatchObject({ rows: [], truncated: true, truncatedBy: 'bytes', rowCount: 1 });
  });
});

describe('params arrive as the caller sent them', () => {
  /** Posts `params` as raw JSON text: the numbers exactly as a caller writes them. */
  const withRawParams = (sqlText: string, paramsJson: string) => {
    const payload = JSON.stringify({ ...target(), sql: sqlText });
    return request(testApp.app)
      .post('/api/query')
      .set('content-type', 'application/json')
      .send(`${payload.slice(0, -1)},"params":${paramsJson}}`);
  };

  it('refuses a number JSON parsing already rounded, and keeps -0', async () => {
    const rounded = [
      '9007199254740993',
      '123456789012345678901234567890.123',
      '1e400',
      // Parsing turns these into 0 and 1: the parsed value cannot tell, only the text can.
      '1e-400',
      '-2e-324',
      '1.0000000000000000000001',
    ];
    for (const value of rounded) {
      const { body } = await withRawParams('SELECT $1::numeric::text AS v', `[${value}]`).expect(
        400,
      );
      expect(body.error).toBe(
        `The number ${value} in 'params' cannot be carried exactly by JSON; send it as a string`,
      );
    }
    // Exact however written: zeros, trailing zeros, exponents, 2^53 - 1, digits inside strings.
    const exactLiterals = ['0.000', '-0e10', '1.500', '1e-300', '9007199254740991', '12e3'];
    for (const value of exactLiterals) {
      await withRawParams('SELECT $1::numeric::text AS v', `[${value}]`).expect(200);
    }
    await withRawParams("SELECT $1 || '' AS v", '["1e-400 1.0000000000000000000001"]').expect(200);
    const kept = await withRawParams('SELECT $1::float8::text AS v', '[-0]').expect(200);
    expect(kept.body.rows).toEqual([{ v: '-0' }]);
    const exact = await withRawParams('SELECT $1::numeric::text AS v', '[0.1]').expect(200);
    expect(exact.body.rows).toEqual([{ v: '0.1' }]);
  });

  it('sends every number whose value a double keeps, with 17 digits or at 2^53 too', async () => {
    for (const [literal, text] of [
      ['0.30000000000000004', '0.30000000000000004'],
      ['9007199254740992', '9007199254740992'],
      ['-1.5e300', `-15${'0'.repeat(299)}`],
      // The value is kept, its spelling is not (decisions 10.8): a string keeps the scale.
      ['10.50', '10.5'],
      ['1E+2', '100'],
      // Past 2^53 with few significant digits, written out or with an exponent.
      ['1e20', '100000000000000000000'],
      ['100000000000000000000', '100000000000000000000'],
      ['123000000000000000000', '123000000000000000000'],
    ]) {
      const { body } = await withRawParams('SELECT $1::numeric::text AS v', `[${literal}]`).expect(
        200,
      );
      expect(body.rows).toEqual([{ v: text }]);
    }
    const nested = await withRawParams(
      "SELECT $1::jsonb->>'a' AS v",
      '[{"a":0.30000000000000004}]',
    ).expect(200);
    expect(nested.body.rows).toEqual([{ v: '0.30000000000000004' }]);
  });
});

describe('caller mistakes are 400 (10.8)', () => {
  it('refuses a body that is not valid UTF-8 instead of replacing its bytes', async () => {
    await sql('TRUNCATE honest_log');
    const body = Buffer.concat([
      Buffer.from(JSON.stringify({ ...target(), sql: "SELECT 'caf" }).slice(0, -1)),
      Buffer.from([0xe9]),
      Buffer.from(`' AS v"}`),
    ]);
    const server = createServer(testApp.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'Request body is not valid UTF-8' });
    } finally {
      server.close();
    }
    expect(await sql('SELECT count(*)::int AS n FROM honest_log')).toEqual([{ n: 0 }]);
  });

  it('answers a wrong number of params with 400, not 502', async () => {
    const { body } = await query({ sql: 'SELECT $1::int + $2::int AS n', params: [1] }).expect(400);
    expect(body.error).toMatchObject({ code: '08P01' });
  });
});

describe('a defect is a 500 without detail (10.8)', () => {
  it('answers Internal server error with the request id, and logs the detail', async () => {
    const broken: ConnectionProvider = {
      acquire: () => {
        throw new TypeError('secret internal detail is not a function');
      },
      check: () => Promise.reject(new Error('unused')),
      poolStats: () => [],
      scopeOf: () =>
        Promise.resolve({ ok: true, value: { server: 's', database: 's/db', credentials: 'c' } }),
      close: () => Promise.resolve(),
    };
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const app = createApp({ service: createQueryService({ connections: broken }), logger });
    const response = await request(app)
      .post('/api/query')
      .set('X-Request-Id', 'req-500')
      .send({ ...target(), sql: 'SELECT 1' })
      .expect(500);
    expect(response.body).toEqual({ error: 'Internal server error', requestId: 'req-500' });
    expect(lines.join('')).toContain('secret internal detail');
  });
});

describeWithLocalCluster('connections lost, frozen or abandoned', () => {
  let server: Server;
  let url: string;
  const logLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          done();
        },
      }),
    );
    server = createServer(createApp({ service: testApp.service, logger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...target(), ...body }),
    });
    return { status: response.status, body: (await response.json()) as AnswerBody };
  };

  /** Sends a request and drops the connection after `afterMs`, as a caller that gives up. */
  const postAndHangUp = (body: Record<string, unknown>, afterMs: number, requestId: string) =>
    new Promise<void>((resolve) => {
      const outgoing = httpRequest(`${url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      });
      outgoing.on('error', () => resolve());
      outgoing.end(JSON.stringify({ ...target(), ...body }));
      setTimeout(() => {
        outgoing.destroy();
        resolve();
      }, afterMs);
    });

  it('lists what committed when the backend is terminated mid-script (10.5)', async () => {
    await sql('TRUNCATE honest_log');
    const answer = post({
      sql: 'BEGIN; INSERT INTO honest_log VALUES (450); COMMIT; BEGIN; INSERT INTO honest_log VALUES (451); SELECT pg_sleep(60); COMMIT',
    });
    const pid = await backendRunning('SELECT pg_sleep(60)');
    await sql('SELECT pg_terminate_backend($1)', [pid]);
    const { status, body } = await answer;
    expect({ status, body }).toMatchObject({ status: 502, body: { multipleResults: true } });
    expect(body.failedStatementIndex).toBe(5);
    expect(body.results).toHaveLength(6);
    expect(body.results.slice(0, 5).every((result) => !result.error)).toBe(true);
    expect(body.results[5]?.cause).toMatchObject({ code: '57P01', statementIndex: 5 });
    expect(await sql('SELECT n FROM honest_log ORDER BY n')).toEqual([{ n: 450 }]);
    // The service goes on.
    expect((await post({ sql: 'SELECT 1 AS one' })).status).toBe(200);
  });

  it('gives up on a frozen backend at timeoutMs + 2 s and closes the connection (10.6)', async () => {
    // The one pooled connection's backend is frozen before the statement is sent: it can neither
    // answer nor be cancelled, however slowly the test runs.
    const frozenApp = createTestApp({ poolMax: 1 });
    const send = (sql: string, timeoutMs?: number) =>
      request(frozenApp.app)
        .post('/api/query')
        .send({ ...target(), sql, ...(timeoutMs ? { timeoutMs } : {}) });
    const pid = (await send('SELECT pg_backend_pid() AS pid').expect(200)).body.rows[0].pid;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const { status, body } = await send('SELECT 1 AS frozen', 1000);
      // Only the give-up can answer, and not before timeoutMs + 2 s.
      expect(status).toBe(504);
      expect(body.error).toMatchObject({ code: 'ETIMEDOUT' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
      // The connection was closed: the next request gets a backend of its own.
      expect((await send('SELECT 1 AS one').expect(200)).body.rows).toEqual([{ one: 1 }]);
    } finally {
      process.kill(pid, 'SIGCONT');
      await frozenApp.close();
    }
  }, 60_000);

  it('sends nothing more once the caller is gone, even past a swallowed cancel (10.7)', async () => {
    await sql('TRUNCATE honest_log');
    await postAndHangUp(
      {
        sql: 'BEGIN; INSERT INTO honest_log VALUES (1); SELECT honest_stubborn_sleep(5); INSERT INTO honest_log VALUES (2); COMMIT',
      },
      400,
      'gone-caller-managed',
    );
    await postAndHangUp(
      {
        sql: 'INSERT INTO honest_log VALUES (3); SELECT honest_stubborn_sleep(5); INSERT INTO honest_log VALUES (4)',
      },
      400,
      'gone-transaction',
    );
    // A request is logged when it ends: whatever it sent after the caller left was sent by then.
    await eventually(() => {
      for (const reqId of ['gone-caller-managed', 'gone-transaction']) {
        expect(logLines.find((line) => line.reqId === reqId)).toMatchObject({
          status: 499,
          aborted: true,
        });
      }
    });
    expect(await sql('SELECT n FROM honest_log')).toEqual([]);
  }, 30_000);

  it('keeps the backend of an abandoned request out of the pool until it is clean', async () => {
    const client = await directClient();
    try {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND application_name = 'sqlgate'",
      );
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await client.end();
    }
  });
});
