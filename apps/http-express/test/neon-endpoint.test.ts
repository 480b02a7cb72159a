/**
 * POST /sql on the wire (docs/interface.md, "POST /sql"), against the real PostgreSQL: the shapes
 * the Neon driver reads, the headers it sends, what sqlgate refuses and how, the limits that
 * answer 507 rather than drop rows, and a seeded fuzz of bodies and headers that always gets a
 * JSON error in Neon's shape and leaves the service running.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, database, refusingPort, sql, target, type TestApp } from './support';
import { rawExchange } from './raw-http';
import { mulberry32 } from '@sqlgate/testing';
import type { ServerConfig } from '../src/config';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CONNECTION_STRING =
  `postgresql://${encodeURIComponent(database.user)}:${encodeURIComponent(database.password ?? '')}` +
  `@${database.host}:${database.port}/${encodeURIComponent(database.database)}`;

/** What the Neon driver sends on every request. */
const DRIVER_HEADERS = {
  'Neon-Connection-String': CONNECTION_STRING,
  'Neon-Raw-Text-Output': 'true',
  'Neon-Array-Mode': 'true',
  'content-type': 'text/plain;charset=UTF-8',
};

const ERROR_KEYS = [
  'message',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'severity',
  'where',
  'table',
  'column',
  'schema',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
];

interface Served {
  url: string;
  close(): Promise<void>;
}

async function serve(config: Partial<ServerConfig> = {}): Promise<Served> {
  const testApp: TestApp = createTestApp(config);
  const server: Server = testApp.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await testApp.close();
    },
  };
}

let main: Served;
beforeAll(async () => {
  await sql(
    'DROP TABLE IF EXISTS neon_wire; CREATE TABLE neon_wire (id int PRIMARY KEY, note text)',
  );
  main = await serve();
});
afterAll(() => main.close());

async function post(
  body: unknown,
  headers: Record<string, string> = DRIVER_HEADERS,
  base = main.url,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const response = await fetch(`${base}/sql`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Json, headers: response.headers };
}

function expectNeonError(body: Json, code: string | RegExp, message: string | RegExp): void {
  expect(Object.keys(body)).toEqual(ERROR_KEYS);
  expect(body.code).toEqual(typeof code === 'string' ? code : expect.stringMatching(code));
  expect(body.message).toEqual(
    typeof message === 'string' ? message : expect.stringMatching(message),
  );
  // PostgreSQL's source location is never shown.
  expect(body.file).toBeNull();
  expect(body.line).toBeNull();
}

describe('answers in the shapes the Neon driver reads', () => {
  it("gives values as PostgreSQL's text, the server's type OIDs, and the tag's command and count", async () => {
    const { status, body } = await post({
      query:
        'SELECT $1::int8 AS big, 1.50::numeric AS num, NULL::text AS nothing, true AS yes, ' +
        "'2024-02-29 10:00+02'::timestamptz AS at, ARRAY[1, NULL]::int[] AS list",
      params: ['9007199254740993'],
    });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['fields', 'rows', 'command', 'rowCount', 'rowAsArray']);
    expect(body.fields.map((field: Json) => [field.name, field.dataTypeID])).toEqual([
      ['big', 20],
      ['num', 1700],
      ['nothing', 25],
      ['yes', 16],
      ['at', 1184],
      ['list', 1007],
    ]);
    expect(body.fields[0]).toEqual({
      name: 'big',
      dataTypeID: 20,
      tableID: 0,
      columnID: 0,
      dataTypeSize: 8,
      dataTypeModifier: -1,
      format: 'text',
    });
    const [[big, num, nothing, yes, at, list]] = body.rows;
    expect([big, num, nothing, yes, list]).toEqual([
      '9007199254740993',
      '1.50',
      null,
      't',
      '{1,NULL}',
    ]);
    expect(at).toMatch(/^2024-02-29 \d\d:00:00[+-]\d\d/);
    expect(body).toMatchObject({ command: 'SELECT', rowCount: 1, rowAsArray: true });
  });

  it('counts what the tag counts, and says null where the tag has no count', async () => {
    const inserted = await post({
      query: 'INSERT INTO neon_wire VALUES (1, $1), (2, $2)',
      params: ['one', null],
    });
    expect(inserted.body).toMatchObject({ command: 'INSERT', rowCount: 2, fields: [], rows: [] });
    const created = await post({ query: 'CREATE TEMP TABLE IF NOT EXISTS neon_scratch (a int)' });
    expect(created.body).toMatchObject({ command: 'CREATE', rowCount: null });
    // SHOW and EXPLAIN return rows, but their tags count nothing.
    for (const query of ['SHOW server_version', 'EXPLAIN SELECT 1']) {
      expect((await post({ query })).body).toMatchObject({ rowCount: null });
    }
  });

  it('gives rows as objects without Neon-Array-Mode (or with arrayMode: false), the last of two names winning', async () => {
    const { 'Neon-Array-Mode': _arrays, ...objects } = DRIVER_HEADERS;
    const query = 'SELECT 1 AS a, 2 AS a, 3 AS "__proto__"';
    for (const answer of [
      await post({ query }, objects),
      await post({ query, arrayMode: false }),
    ]) {
      expect(answer.body.rowAsArray).toBe(false);
      expect(JSON.stringify(answer.body.rows)).toBe('[{"a":"2","__proto__":"3"}]');
    }
  });

  it("gives sqlgate's JSON values without Neon-Raw-Text-Output", async () => {
    const { 'Neon-Raw-Text-Output': _text, ...parsed } = DRIVER_HEADERS;
    const { body } = await post(
      { query: 'SELECT 1 AS n, true AS b, \'{"k": 1}\'::jsonb AS j' },
      parsed,
    );
    expect(body.rows).toEqual([[1, true, { k: 1 }]]);
  });

  it('binds params as Neon does: null, strings as sent, numbers and objects as JSON, arrays as arrays', async () => {
    const { body } = await post({
      query:
        'SELECT $1::text IS NULL AS n, $2::text AS s, $3::int AS i, $4::jsonb AS o, $5::int[] AS a',
      params: [null, ' two ', 3, { k: [1] }, [1, 2]],
    });
    expect(body.rows).toEqual([['t', ' two ', '3', '{"k": [1]}', '{1,2}']]);
  });

  it('answers every row, past MAX_ROWS: the only bound is MAX_RESULT_BYTES', async () => {
    const { status, body } = await post({ query: 'SELECT generate_series(1, 20000) AS n' });
    expect(status).toBe(200);
    expect(body.rows).toHaveLength(20000);
    expect(body.rowCount).toBe(20000);
  });

  it('reads a body sent with no Content-Type, or as application/json', async () => {
    const { 'content-type': _type, ...untyped } = DRIVER_HEADERS;
    expect((await post({ query: 'SELECT 1' }, untyped)).status).toBe(200);
    const json = { ...untyped, 'content-type': 'application/json' };
    expect((await post({ query: 'SELECT 1' }, json)).status).toBe(200);
  });
});

describe('batches', () => {
  it('run in one transaction at the level asked, and echo the batch headers', async () => {
    const { status, body, headers } = await post(
      {
        queries: [
          { query: 'SELECT current_setting($1) AS level', params: ['transaction_isolation'] },
          { query: "SELECT current_setting('transaction_read_only') AS ro" },
          { query: "SELECT current_setting('transaction_deferrable') AS deferrable" },
        ],
      },
      {
        ...DRIVER_HEADERS,
        'Neon-Batch-Isolation-Level': 'Serializable',
        'Neon-Batch-Read-Only': 'true',
        'Neon-Batch-Deferrable': 'true',
      },
    );
    expect(status).toBe(200);
    expect(body.results.map((result: Json) => result.rows[0][0])).toEqual([
      'serializable',
      'on',
      'on',
    ]);
    expect(headers.get('neon-batch-isolation-level')).toBe('Serializable');
    expect(headers.get('neon-batch-read-only')).toBe('true');
    expect(headers.get('neon-batch-deferrable')).toBe('true');
  });

  it('roll back whole at the first failure, answering its error', async () => {
    const { status, body } = await post({
      queries: [
        { query: 'INSERT INTO neon_wire VALUES (10, $1)', params: ['kept?'] },
        { query: 'INSERT INTO neon_wire VALUES (10, $1)', params: ['duplicate'] },
      ],
    });
    expect(status).toBe(400);
    expectNeonError(body, '23505', /duplicate key value/);
    expect(body.constraint).toBe('neon_wire_pkey');
    expect(await sql('SELECT * FROM neon_wire WHERE id = 10')).toEqual([]);
  });

  it('answer an empty batch without running anything', async () => {
    const { status, body } = await post({ queries: [] });
    expect(status).toBe(200);
    expect(body).toEqual({ results: [] });
  });

  it('refuse transaction control, and a query holding several statements', async () => {
    const begin = await post({ queries: [{ query: 'SELECT 1' }, { query: 'COMMIT' }] });
    expect(begin.status).toBe(400);
    expectNeonError(begin.body, 'INVALID_REQUEST', /^A batch cannot hold COMMIT \(statement 1\)/);
    const two = await post({ queries: [{ query: 'SELECT 1; SELECT 2' }] });
    expectNeonError(two.body, 'INVALID_REQUEST', /query 0 holds 2/);
  });
});

describe('errors', () => {
  it("answers PostgreSQL's errors with 400 and every field sqlgate shows, in Neon's order", async () => {
    const { status, body } = await post({ query: 'SELECT * FROM neon_missing_table' });
    expect(status).toBe(400);
    expectNeonError(body, '42P01', 'relation "neon_missing_table" does not exist');
    expect(body).toMatchObject({ position: '15', severity: 'ERROR', hint: null });
    expect(typeof body.routine).toBe('string');
  });

  it("keeps sqlgate's own status for a server that cannot be reached: 502, its system code", async () => {
    const port = await refusingPort();
    const { status, body } = await post(
      { query: 'SELECT 1' },
      { ...DRIVER_HEADERS, 'Neon-Connection-String': `postgresql://u:p@127.0.0.1:${port}/d` },
    );
    expect(status).toBe(502);
    expectNeonError(body, 'ECONNREFUSED', /./);
  });

  it('answers a connection PostgreSQL refuses with its SQLSTATE', async () => {
    const elsewhere = CONNECTION_STRING.replace(
      `/${encodeURIComponent(database.database)}`,
      '/neon_no_such_database',
    );
    const { status, body } = await post(
      { query: 'SELECT 1' },
      { ...DRIVER_HEADERS, 'Neon-Connection-String': elsewhere },
    );
    // Refused at login: the database does not exist (3D000), or the login may not reach it (28xxx).
    expect(status).toBe(400);
    expectNeonError(body, /^(3D000|28P01|28000)$/, /./);
  });

  const withoutConnectionString = (({ 'Neon-Connection-String': _c, ...rest }) => rest)(
    DRIVER_HEADERS,
  );
  it.each([
    [withoutConnectionString, 'no Neon-Connection-String', /header is required/],
    [
      { ...DRIVER_HEADERS, 'Neon-Connection-String': 'mysql://u@h/d' },
      'another scheme',
      /Neon-Connection-String header/,
    ],
    [
      { ...DRIVER_HEADERS, 'Neon-Batch-Isolation-Level': 'Chaos' },
      'an isolation level Neon does not name',
      /Neon-Batch-Isolation-Level must be one of ReadUncommitted/,
    ],
    [
      { ...DRIVER_HEADERS, Authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' },
      "a JWT, Neon's authentication and not sqlgate's",
      /does not take an Authorization header/,
    ],
  ])('refuses a request (%#: %s) before connecting', async (headers, _why, message) => {
    const { status, body } = await post({ query: 'SELECT 1' }, headers);
    expect(status).toBe(400);
    expectNeonError(body, 'INVALID_REQUEST', message);
  });

  it('refuses a header given twice, which Node would join into one connection string', async () => {
    const body = JSON.stringify({ query: 'SELECT 1' });
    const answer = await rawExchange(
      Number(new URL(main.url).port),
      'POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
        `Neon-Connection-String: ${CONNECTION_STRING}\r\n` +
        'Neon-Connection-String: postgresql://u:hunter2@elsewhere/d\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('The Neon-Connection-String header is given more than once');
    expect(answer).not.toContain('hunter2');
  });

  it.each([
    ['[]', /must be a JSON object/],
    ['{"query": 1}', /query/],
    ['{"query": "SELECT 1", "sql": "x"}', /Unknown field 'sql'/],
    ['{"query": "SELECT 1", "queries": []}', /Unknown field 'query'/],
    ['{"queries": [{"query": "SELECT 1", "extra": true}]}', /Unknown field 'extra'/],
    ['{"query": "SELECT 1; SELECT 2"}', /holds 2/],
    ['{"query": "SELECT $1", "params": ["a\\u0000b"]}', /NUL/],
    ['{"query": "SELECT 1"', /JSON/],
    ['{"queries": [1]}', /queries\[0\] must be a JSON object/],
    ['{"queries": 1}', /'queries' must be an array/],
  ])("refuses the body %s with a 400 in Neon's shape", async (text, message) => {
    const { status, body } = await post(text);
    expect(status).toBe(400);
    expectNeonError(body, /^(INVALID_REQUEST|)$/, message);
  });

  it('answers 507 rather than drop rows past MAX_RESULT_BYTES', async () => {
    const small = await serve({ maxResultBytes: 4096 });
    try {
      const { status, body } = await post(
        { query: "SELECT repeat('x', 100) FROM generate_series(1, 100)" },
        DRIVER_HEADERS,
        small.url,
      );
      expect(status).toBe(507);
      expectNeonError(body, 'RESULT_TOO_LARGE', /response is too large/);
    } finally {
      await small.close();
    }
  });

  it('keeps its own statuses for its own refusals: a target ALLOWED_TARGETS does not allow is 403', async () => {
    const guarded = await serve({ allowedTargets: '192.0.2.1' });
    try {
      const { status, body } = await post({ query: 'SELECT 1' }, DRIVER_HEADERS, guarded.url);
      expect(status).toBe(403);
      expect(body.message).toMatch(/not allowed/);
    } finally {
      await guarded.close();
    }
  });
});

describe('the service around it', () => {
  it('cancels a /sql request by its X-Request-Id, as any request: the driver sees 57014', async () => {
    const requestId = `neon-cancel-${process.pid}`;
    const running = post(
      { query: 'SELECT pg_sleep(60) AS neon_cancel_victim' },
      { ...DRIVER_HEADERS, 'X-Request-Id': requestId },
    );
    // Waits until the statement runs: a cancel before it registers cancels nothing.
    for (let tries = 0; ; tries++) {
      const rows = await sql(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%AS neon_cancel_victim%'",
      );
      if (Number(rows[0]?.n) === 1) break;
      if (tries > 300) throw new Error('the statement never started');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const cancel = await fetch(`${main.url}/api/requests/${requestId}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(target()),
    });
    expect(await cancel.json()).toEqual({ cancelled: true });
    const { status, body } = await running;
    expect(status).toBe(400);
    expectNeonError(body, '57014', /canceling statement due to user request/);
  });
});

describe('in a session (Sqlgate-Session)', () => {
  async function openSession(
    headers: Record<string, string>,
    body: unknown = {},
  ): Promise<Response> {
    return fetch(`${main.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  }

  it('opens on the Neon-Connection-String target, and runs /sql statements in its transaction', async () => {
    const opened = await openSession({ 'Neon-Connection-String': CONNECTION_STRING });
    expect(opened.status).toBe(201);
    const { sessionId } = (await opened.json()) as Json;
    const inSession = { ...DRIVER_HEADERS, 'Sqlgate-Session': sessionId as string };
    delete (inSession as Record<string, string>)['Neon-Connection-String'];
    expect((await post({ query: 'BEGIN' }, inSession)).body.command).toBe('BEGIN');
    await post(
      { query: 'INSERT INTO neon_wire VALUES (20, $1)', params: ['uncommitted'] },
      inSession,
    );
    // Not visible elsewhere before COMMIT, visible in the session.
    expect(await sql('SELECT * FROM neon_wire WHERE id = 20')).toEqual([]);
    expect(
      (await post({ query: 'SELECT note FROM neon_wire WHERE id = 20' }, inSession)).body.rows,
    ).toEqual([['uncommitted']]);
    expect((await post({ query: 'ROLLBACK' }, inSession)).body.command).toBe('ROLLBACK');
    expect(await sql('SELECT * FROM neon_wire WHERE id = 20')).toEqual([]);
    const batch = await post({ queries: [{ query: 'SELECT 1' }] }, inSession);
    expectNeonError(batch.body, 'INVALID_REQUEST', /A batch does not run in a session/);
    const both = await post(
      { query: 'SELECT 1' },
      { ...inSession, 'Neon-Connection-String': CONNECTION_STRING },
    );
    expectNeonError(both.body, 'INVALID_REQUEST', /names no Neon-Connection-String/);
    await fetch(`${main.url}/api/sessions/${sessionId as string}`, { method: 'DELETE' });
    const gone = await post({ query: 'SELECT 1' }, inSession);
    expect(gone.status).toBe(404);
    expect(Object.keys(gone.body)).toEqual(ERROR_KEYS);
  });

  it('refuses a session body that names a target beside the header', async () => {
    const opened = await openSession(
      { 'Neon-Connection-String': CONNECTION_STRING },
      { host: 'elsewhere' },
    );
    expect(opened.status).toBe(400);
    expect(await opened.json()).toMatchObject({
      error: expect.stringMatching(/'host' cannot be sent with a Neon-Connection-String/),
    });
  });
});

describe('a hostile caller', () => {
  it("always gets JSON, an error in Neon's shape when refused, and the service goes on (seed 4242)", async () => {
    const next = mulberry32(4242);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const queries = [
      'SELECT 1',
      'SELECT $1::int',
      'SELECT 1/0',
      '',
      ';',
      'BEGIN',
      'SELECT $2',
      42,
      null,
    ];
    const params = [
      undefined,
      [],
      ['1'],
      [null],
      [{}],
      [[1, [2]]],
      'x',
      [Number.MAX_SAFE_INTEGER + 2],
    ];
    const bodies = (): unknown => {
      const one = (): Json => {
        const body: Json = { query: pick(queries) };
        const values = pick(params);
        if (values !== undefined) body.params = values;
        if (next() < 0.2) body.arrayMode = pick([true, false, 'yes']);
        return body;
      };
      const shape = next();
      if (shape < 0.5) return one();
      if (shape < 0.8) return { queries: Array.from({ length: Math.floor(next() * 4) }, one) };
      return pick([
        '{',
        'null',
        '"text"',
        '{"queries": 1}',
        '{"queries": [1]}',
        '[{"query": "SELECT 1"}]',
      ]);
    };
    const headerSets = (): Record<string, string> => {
      const headers: Record<string, string> = { ...DRIVER_HEADERS };
      if (next() < 0.1)
        headers['Neon-Connection-String'] = pick(['', 'postgresql://', 'postgresql://u@/d', '%%%']);
      if (next() < 0.1)
        headers['Neon-Batch-Isolation-Level'] = pick(['Serializable', 'serializable', '']);
      if (next() < 0.1) headers['Neon-Batch-Read-Only'] = pick(['true', 'TRUE', '1']);
      return headers;
    };
    for (let attempt = 0; attempt < 150; attempt++) {
      const body = bodies();
      const { status, body: answer } = await post(body, headerSets());
      if (status === 200) {
        expect(answer.fields ?? answer.results).toBeDefined();
      } else {
        expect([400, 413, 507]).toContain(status);
        expect(Object.keys(answer)).toEqual(ERROR_KEYS);
        expect(typeof answer.message).toBe('string');
      }
    }
    expect((await post({ query: 'SELECT 2 AS alive' })).body.rows).toEqual([['2']]);
  });
});
