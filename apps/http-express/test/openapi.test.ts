/**
 * The OpenAPI document (GET /api/openapi.json) against what the service really answers: every body
 * and documented header below comes from the app over a real PostgreSQL database.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import express from 'express';
import { ROUTES as CONTRACT_ROUTES } from '../src/contract';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../src/app';
import { buildOpenApiDocument, openApiDocument } from '../src/openapi';
import { Contract, HTTP_METHODS, valueAt, type HttpAnswer } from './openapi/contract';
import { createTestApp, sql, target, type TestApp, refusingPort } from './support';

const TABLE = 'openapi_contract_items';

/** Every route the Express app registers, with its methods, read from its router. */
function routesOf(app: Express): Record<string, string[]> {
  const routes: Record<string, string[]> = {};
  const stack = (app as unknown as { router: { stack: { route?: ExpressRoute }[] } }).router.stack;
  for (const { route } of stack) {
    if (!route) continue;
    // Express writes a path parameter `:name`, the document `{name}`.
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    for (const method of Object.keys(route.methods))
      (routes[path] ??= []).push(method.toUpperCase());
  }
  return routes;
}

interface ExpressRoute {
  path: string;
  methods: Record<string, boolean>;
}

const sorted = (routes: Record<string, string[]>): Record<string, string[]> =>
  Object.fromEntries(Object.entries(routes).map(([path, methods]) => [path, [...methods].sort()]));

const contract = new Contract();
let testApp: TestApp;

/** POSTs a body to the query endpoint; a body meant to be valid is checked against the request schema first. */
async function query(
  fields: Record<string, unknown>,
  options: { validRequest?: boolean } = {},
): Promise<HttpAnswer> {
  const body = target(fields);
  if (options.validRequest !== false) contract.expectValidRequest('/api/query', 'post', body);
  return request(testApp.app).post('/api/query').send(body);
}

/** Checks an answer of the query endpoint against the document and returns it for further checks. */
function documentedQuery(answer: HttpAnswer, status: number): HttpAnswer {
  expect({ status: answer.status, body: answer.body }).toMatchObject({ status });
  contract.expectDocumented(answer, '/api/query', 'post');
  return answer;
}

/** A port on 127.0.0.1 where nothing listens. */

beforeAll(async () => {
  testApp = createTestApp();
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
  await sql(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, name text NOT NULL)`);
});

afterAll(async () => {
  await testApp.close();
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
});

describe('the document', () => {
  it('is an OpenAPI 3.1 document whose paths all have operations with responses', () => {
    const document = contract.document as {
      openapi: unknown;
      info: { title?: unknown; version?: unknown };
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(typeof document.info.title).toBe('string');
    expect(typeof document.info.version).toBe('string');
    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries(document.paths)) {
      expect(path.startsWith('/')).toBe(true);
      const operations = HTTP_METHODS.filter((method) => item[method] !== undefined);
      expect(operations.length).toBeGreaterThan(0);
      for (const method of operations) {
        const operation = item[method] as {
          operationId?: string;
          responses?: Record<string, { description?: unknown }>;
          security?: Record<string, unknown>[];
        };
        expect(typeof operation.operationId).toBe('string');
        expect(operationIds.has(operation.operationId as string)).toBe(false);
        operationIds.add(operation.operationId as string);
        const responses = Object.entries(operation.responses ?? {});
        expect({ at: `${method} ${path}`, responses: responses.length > 0 }).toEqual({
          at: `${method} ${path}`,
          responses: true,
        });
        for (const [status, response] of responses) {
          expect(status).toMatch(/^([1-5][0-9]{2}|default)$/);
          const resolved =
            '$ref' in response ? valueAt(document, (response as { $ref: string }).$ref) : response;
          expect(typeof (resolved as { description?: unknown }).description).toBe('string');
        }
        for (const requirement of operation.security ?? []) {
          for (const scheme of Object.keys(requirement))
            expect(document.components.securitySchemes[scheme]).toBeDefined();
        }
      }
    }
  });

  it('resolves every reference and compiles every schema', () => {
    const unresolved = contract
      .references()
      .filter(({ ref }) => valueAt(contract.document, ref) === undefined);
    expect(unresolved).toEqual([]);
    const schemas = Object.keys(
      (contract.document.components as { schemas: Record<string, unknown> }).schemas,
    );
    expect(schemas.length).toBeGreaterThan(10);
    for (const name of schemas)
      expect(() => contract.validatorAt(`#/components/schemas/${name}`)).not.toThrow();
  });

  it('has a description on every component schema', () => {
    const schemas = (
      contract.document.components as {
        schemas: Record<string, { description?: unknown; type?: unknown }>;
      }
    ).schemas;
    const undocumented = Object.entries(schemas)
      .filter(([, schema]) => typeof schema.description !== 'string')
      .map(([name]) => name);
    // Wrapper bodies whose properties carry the meaning may go without one; the domain objects may not.
    for (const path of ['/api/query', '/api/test-connection']) {
      const requestSchema = valueAt(
        contract.document,
        `#/paths/${path.replace(/\//g, '~1')}/post/requestBody/content/application~1json/schema`,
      ) as { description?: unknown };
      expect(typeof requestSchema.description).toBe('string');
    }
    for (const name of [
      'QueryExecutionResult',
      'MultipleStatementsResponse',
      'QueryErrorObject',
      'PoolStat',
      'CacheStats',
      'CacheEntry',
    ]) {
      expect(undocumented).not.toContain(name);
    }
  });

  it('documents the statistics token as optional on the three statistics endpoints only', () => {
    const security = (path: string, method: string): unknown =>
      (
        valueAt(contract.document, `#/paths/${path.replace(/\//g, '~1')}/${method}`) as {
          security?: unknown;
        }
      ).security;
    for (const [path, method] of [
      ['/api/stats/pools', 'get'],
      ['/api/stats/cache', 'get'],
      ['/api/stats/cache', 'delete'],
    ] as const) {
      expect(security(path, method)).toEqual([{}, { statsToken: [] }]);
    }
    expect(security('/api/query', 'post')).toBeUndefined();
    expect(valueAt(contract.document, '#/components/securitySchemes/statsToken')).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
  });

  it('has a schema for every route the app registers: the route table of the contract', () => {
    const contractRoutes: Record<string, string[]> = {};
    for (const route of CONTRACT_ROUTES)
      (contractRoutes[route.path] ??= []).push(route.method.toUpperCase());
    expect(sorted(routesOf(createApp({ service: testApp.service })))).toEqual(
      sorted(contractRoutes),
    );
    // The check itself: an app with one more route fails it.
    const extended = createApp({ service: testApp.service });
    extended.get('/api/undocumented', (_req, res) => res.json({}));
    expect(sorted(routesOf(extended))).not.toEqual(sorted(contractRoutes));
  });

  it('documents every route the app answers, and nothing else', async () => {
    const ROUTES = routesOf(createApp({ service: testApp.service }));
    const documented = Object.fromEntries(
      Object.entries(contract.document.paths as Record<string, Record<string, unknown>>).map(
        ([path, item]) => [
          path,
          HTTP_METHODS.filter((method) => item[method] !== undefined)
            .map((method) => method.toUpperCase())
            .sort(),
        ],
      ),
    );
    expect(documented).toEqual(sorted(ROUTES));
    for (const [path, methods] of Object.entries(ROUTES)) {
      // A path with parameters is called with an id nothing has: answered, documented, 404.
      const concrete = path.replace(/\{[A-Za-z]+\}/g, 'unknown-id');
      const hasParameters = concrete !== path;
      // The app's own list of methods of a path, from the Allow header of a 405.
      const wrong = await request(testApp.app).patch(concrete).send({});
      expect(wrong.status).toBe(405);
      expect(String(wrong.headers.allow).split(', ').sort()).toEqual([...methods].sort());
      contract.expectComponentResponse(wrong, 'MethodNotAllowed');
      for (const method of methods) {
        const verb = method.toLowerCase() as 'get' | 'post' | 'delete';
        const answer = await request(testApp.app)[verb](concrete).send({});
        const unrouted = hasParameters ? [405] : [404, 405];
        expect({
          route: `${method} ${path}`,
          answered: !unrouted.includes(answer.status),
        }).toEqual({ route: `${method} ${path}`, answered: true });
        contract.expectDocumented(answer, path, method);
      }
    }
  });
});

describe('POST /api/query', () => {
  it('200: one SELECT, in object and array row modes', async () => {
    const single = documentedQuery(
      await query({
        sql: "SELECT 1 AS one, 'x'::text AS two, NULL::int AS three, '{\"a\":1}'::jsonb AS four;",
      }),
      200,
    );
    expect(single.body).toMatchObject({
      rows: [{ one: 1, two: 'x', three: null, four: { a: 1 } }],
      command: 'SELECT',
      statement: expect.stringMatching(/;$/),
    });
    expect(single.headers['server-timing']).toMatch(/^pool;dur=/);
    const arrays = documentedQuery(
      await query({ sql: 'SELECT 1 AS a, 2 AS a', rowMode: 'array' }),
      200,
    );
    expect(arrays.body).toMatchObject({ rows: [[1, 2]] });
    const empty = documentedQuery(await query({ sql: 'SELECT 1 WHERE false' }), 200);
    expect(empty.body).toMatchObject({ rows: [], rowCount: 0 });
  });

  it('200: several reads, in parallel and without transactionUsed', async () => {
    const answer = documentedQuery(await query({ sql: 'SELECT 1 AS a; SELECT 2 AS b' }), 200);
    expect(answer.body).toMatchObject({
      multipleResults: true,
      results: [{ rows: [{ a: 1 }] }, { rows: [{ b: 2 }] }],
    });
    expect(answer.body).not.toHaveProperty('transactionUsed');
  });

  it('200: writes in one transaction', async () => {
    const answer = documentedQuery(
      await query({
        sql: `INSERT INTO ${TABLE} VALUES (1, 'one'), (2, 'two'); UPDATE ${TABLE} SET name = 'uno' WHERE id = 1; SELECT * FROM ${TABLE} ORDER BY id`,
        isolationLevel: 'serializable',
      }),
      200,
    );
    expect(answer.body).toMatchObject({
      multipleResults: true,
      transactionUsed: true,
      results: [{ command: 'INSERT', rowCount: 2 }, { command: 'UPDATE' }, { rowCount: 2 }],
    });
  });

  it('200: the extensions (dryRun, maxRows, params, cache)', async () => {
    const dryRun = documentedQuery(
      await query({ sql: `INSERT INTO ${TABLE} VALUES (99, 'gone')`, dryRun: true }),
      200,
    );
    expect(dryRun.body).toMatchObject({ rolledBack: true, command: 'INSERT' });
    const truncated = documentedQuery(
      await query({ sql: 'SELECT generate_series(1, 5) AS n', maxRows: 2 }),
      200,
    );
    expect(truncated.body).toMatchObject({ truncated: true, rows: [{ n: 1 }, { n: 2 }] });
    const params = documentedQuery(
      await query({ sql: 'SELECT $1::int + 1 AS n', params: [41], port: String(target().port) }),
      200,
    );
    expect(params.body).toMatchObject({ rows: [{ n: 42 }] });
    documentedQuery(await query({ sql: 'SELECT 7 AS cached_once', cache: { ttlMs: 60000 } }), 200);
    const hit = documentedQuery(
      await query({ sql: 'SELECT 7 AS cached_once', cache: { ttlMs: 60000 } }),
      200,
    );
    expect(hit.body).toMatchObject({ cached: true });
  });

  it('200 with warnings: an unknown field runs the request and is named', async () => {
    const answer = documentedQuery(
      await query({ sql: 'SELECT generate_series(1, 3) AS n', maxrows: 1, colour: 'red' }),
      200,
    );
    // Ignored, not applied: all three rows.
    expect(answer.body).toMatchObject({ rows: [{ n: 1 }, { n: 2 }, { n: 3 }] });
    expect((answer.body as { warnings?: unknown }).warnings).toEqual([
      "unknown field 'maxrows' (did you mean 'maxRows'?)",
      "unknown field 'colour'",
    ]);
    const known = documentedQuery(await query({ sql: 'SELECT 1' }), 200);
    expect(known.body).not.toHaveProperty('warnings');
    // On a failure too, where a misspelled option matters most.
    const failed = documentedQuery(
      await query({ sql: 'SELECT no_such_column FROM pg_class', readonly: true }),
      400,
    );
    expect((failed.body as { warnings?: unknown }).warnings).toEqual([
      "unknown field 'readonly' (did you mean 'readOnly'?)",
    ]);
  });

  it('400: an SQL error in a single statement is a QueryErrorObject', async () => {
    const answer = documentedQuery(
      await query({ sql: 'SELECT no_such_column FROM pg_class' }),
      400,
    );
    expect(answer.body).toMatchObject({
      error: {
        code: '42703',
        statementIndex: 0,
        location: { line: 1, column: expect.any(Number) },
      },
    });
  });

  it('400: a failed transaction is rolled back and says where', async () => {
    const answer = documentedQuery(
      await query({ sql: `INSERT INTO ${TABLE} VALUES (10, 'ten'); SELECT 1/0` }),
      400,
    );
    expect(answer.body).toMatchObject({
      error: expect.stringMatching(
        /^Transaction failed at statement: SELECT 1\/0\.\.\. Error: division by zero$/,
      ),
      transactionUsed: true,
      rolledBack: true,
      failedStatementIndex: 1,
      cause: { code: '22012' },
    });
    expect(await sql(`SELECT id FROM ${TABLE} WHERE id = 10`)).toEqual([]);
  });

  it('400: a failed statement among parallel reads', async () => {
    const answer = documentedQuery(
      await query({ sql: 'SELECT 1; SELECT no_such_column FROM pg_class' }),
      400,
    );
    expect(answer.body).toMatchObject({
      multipleResults: true,
      error: 'One or more statements failed',
      failedStatementIndex: 1,
      results: [
        { rows: [{ '?column?': 1 }] },
        { error: expect.any(String), cause: { code: '42703' } },
      ],
    });
  });

  it('400: missing fields, invalid JSON, no statements', async () => {
    const missing = await request(testApp.app)
      .post('/api/query')
      .send({ host: 'localhost', sql: 'SELECT 1' });
    documentedQuery(missing, 400);
    expect(missing.body).toEqual({
      error: 'Missing required fields',
      missing: ['port', 'user', 'database'],
    });
    expect(() =>
      contract.expectValidRequest('/api/query', 'post', { host: 'localhost', sql: 'SELECT 1' }),
    ).toThrow(/must have required property/);
    const invalidJson = await request(testApp.app)
      .post('/api/query')
      .set('content-type', 'application/json')
      .send('{"host": ');
    documentedQuery(invalidJson, 400);
    expect(invalidJson.body).toEqual({ error: 'Request body is not valid JSON' });
    expect(invalidJson.headers['server-timing']).toBeUndefined();
    const nothing = documentedQuery(await query({ sql: ' ;; -- nothing' }), 400);
    expect(nothing.body).toEqual({ error: 'No valid SQL statements found' });
    const unsupported = documentedQuery(
      await query({ sql: 'SELECT 1; COPY pg_class FROM STDIN' }),
      400,
    );
    expect(unsupported.body).toMatchObject({ statementIndex: 1 });
    const unterminated = documentedQuery(await query({ sql: "SELECT 1;\nSELECT 'open" }), 400);
    expect(unterminated.body).toEqual({
      error: 'Unterminated string starting at line 2, column 8',
      location: { line: 2, column: 8 },
    });
  });

  it('409, 503: a serialization failure and too many connections', async () => {
    documentedQuery(
      await query({
        sql: "DO $$ BEGIN RAISE EXCEPTION 'serialize' USING ERRCODE = '40001'; END $$",
      }),
      409,
    );
    const busy = documentedQuery(
      await query({
        sql: "DO $$ BEGIN RAISE EXCEPTION 'too many' USING ERRCODE = '53300'; END $$",
      }),
      503,
    );
    expect(busy.headers['retry-after']).toBe('1');
  });

  it('413: a body larger than MAX_BODY_BYTES', async () => {
    const small = createTestApp({ maxBodyBytes: 100 });
    try {
      const answer = await request(small.app)
        .post('/api/query')
        .send(target({ sql: `SELECT '${'x'.repeat(200)}'` }));
      documentedQuery(answer, 413);
      expect(answer.body).toEqual({ error: 'Request body too large' });
    } finally {
      await small.close();
    }
  });

  it('502: nothing listens on the target port', async () => {
    const answer = documentedQuery(
      await query({ host: '127.0.0.1', port: await refusingPort(), sql: 'SELECT 1' }),
      502,
    );
    expect(answer.body).toEqual({ error: { message: expect.any(String), code: 'ECONNREFUSED' } });
  });

  it('504: a statement timeout', async () => {
    const answer = documentedQuery(await query({ sql: 'SELECT pg_sleep(2)', timeoutMs: 100 }), 504);
    expect(answer.body).toMatchObject({ error: { code: '57014' } });
  });
});

describe('POST /api/test-connection', () => {
  const check = async (body: Record<string, unknown>, valid = true): Promise<HttpAnswer> => {
    if (valid) contract.expectValidRequest('/api/test-connection', 'post', body);
    const answer = await request(testApp.app).post('/api/test-connection').send(body);
    contract.expectDocumented(answer, '/api/test-connection', 'post');
    return answer;
  };

  it('200 on success', async () => {
    const answer = await check(target());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: 'Connection successful' });
  });

  it('failures: unreachable target, wrong password, missing fields', async () => {
    const refused = await check(target({ host: '127.0.0.1', port: await refusingPort() }));
    expect(refused.status).toBe(502);
    expect(refused.body).toEqual({
      success: false,
      error: { message: expect.any(String), code: 'ECONNREFUSED' },
    });
    const wrongPassword = await check(target({ password: 'wrong password' }));
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body).toMatchObject({ success: false, error: { code: '28P01' } });
    const missing = await check({ host: 'localhost' }, false);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      success: false,
      error: { message: 'Missing required fields', code: 'MISSING_FIELDS' },
    });
  });
});

describe('statistics, health and the document itself', () => {
  it('401 on the statistics endpoints when STATS_TOKEN is set and no token is sent', async () => {
    const guarded = createTestApp({ statsToken: 'token-for-openapi' });
    try {
      for (const [method, path] of [
        ['get', '/api/stats/pools'],
        ['get', '/api/stats/cache'],
        ['delete', '/api/stats/cache'],
      ] as const) {
        const answer = await request(guarded.app)[method](path);
        expect(answer.status).toBe(401);
        contract.expectDocumented(answer, path, method);
      }
    } finally {
      await guarded.close();
    }
  });

  it('GET /api/stats/pools', async () => {
    await query({ sql: 'SELECT 1' });
    const answer = await request(testApp.app).get('/api/stats/pools');
    expect(answer.status).toBe(200);
    contract.expectDocumented(answer, '/api/stats/pools', 'get');
    expect(answer.body.stats.length).toBeGreaterThan(0);
  });

  it('GET and DELETE /api/stats/cache', async () => {
    await query({ sql: 'SELECT 11 AS cached_for_stats', cache: true });
    const stats = await request(testApp.app).get('/api/stats/cache');
    expect(stats.status).toBe(200);
    contract.expectDocumented(stats, '/api/stats/cache', 'get');
    expect(stats.body.entries.length).toBeGreaterThan(0);
    expect(stats.body.entries[0]).toMatchObject({
      query: expect.any(String),
      timestamp: expect.any(String),
    });
    const cleared = await request(testApp.app).delete('/api/stats/cache');
    expect(cleared.status).toBe(200);
    contract.expectDocumented(cleared, '/api/stats/cache', 'delete');
    const after = await request(testApp.app).get('/api/stats/cache');
    contract.expectDocumented(after, '/api/stats/cache', 'get');
    expect(after.body).toMatchObject({ stats: { cacheSize: 0 }, entries: [] });
  });

  it('GET /healthz', async () => {
    const answer = await request(testApp.app).get('/healthz');
    expect(answer.status).toBe(200);
    contract.expectDocumented(answer, '/healthz', 'get');
  });

  it('GET /api/openapi.json serves this document', async () => {
    const answer = await request(testApp.app).get('/api/openapi.json');
    expect(answer.status).toBe(200);
    contract.expectDocumented(answer, '/api/openapi.json', 'get');
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(openApiDocument)));
  });

  it('the served document is valid OpenAPI 3.1 for @apidevtools/swagger-parser', async () => {
    const answer = await request(testApp.app).get('/api/openapi.json');
    // validate() dereferences in place: it gets a copy.
    await expect(SwaggerParser.validate(structuredClone(answer.body))).resolves.toBeDefined();
    // The check itself: a document with a dangling reference is refused.
    const broken = structuredClone(answer.body) as { paths: Record<string, unknown> };
    broken.paths['/broken'] = {
      get: { responses: { '200': { $ref: '#/components/responses/Nothing' } } },
    };
    await expect(
      SwaggerParser.validate(broken as unknown as Parameters<typeof SwaggerParser.validate>[0]),
    ).rejects.toThrow();
  });

  it('servers honours the mount path of an embedded app', async () => {
    const root = await request(testApp.app).get('/api/openapi.json');
    expect(root.body.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const host = express();
    host.use('/databases/main', testApp.app);
    const mounted = await request(host).get('/databases/main/api/openapi.json');
    expect(mounted.status).toBe(200);
    expect(mounted.body.servers).toEqual([
      { url: '/databases/main', description: expect.any(String) },
    ]);
    expect(mounted.body).toEqual(
      JSON.parse(JSON.stringify(buildOpenApiDocument('/databases/main'))),
    );
  });

  it('describes CONNECT_TIMEOUT_MS as configurable, not a fixed 5000 ms', () => {
    const text = JSON.stringify(openApiDocument);
    expect(text).toContain('CONNECT_TIMEOUT_MS');
    expect(text).not.toMatch(/with a 5000 ms connect timeout/);
  });

  it('404 and 405 bodies', async () => {
    const missing = await request(testApp.app).get('/api/nothing');
    expect(missing.status).toBe(404);
    contract.expectComponentResponse(missing, 'NotFound');
    const wrongMethod = await request(testApp.app).get('/api/query');
    expect(wrongMethod.status).toBe(405);
    contract.expectComponentResponse(wrongMethod, 'MethodNotAllowed');
    expect(wrongMethod.headers.allow).toBe('POST');
  });
});

describe('the contract checks themselves', () => {
  it('reject a body the document does not describe', () => {
    const answer: HttpAnswer = {
      status: 200,
      body: { rows: [], executionTime: 1 },
      headers: { 'content-type': 'application/json' },
    };
    expect(() => contract.expectDocumented(answer, '/api/query', 'post')).toThrow(/does not match/);
    expect(() =>
      contract.expectDocumented({ ...answer, status: 418 }, '/api/query', 'post'),
    ).toThrow(/not documented/);
    expect(() => contract.expectDocumented(answer, '/api/nothing', 'get')).toThrow(
      /not documented/,
    );
    const select = {
      rows: [{ one: 1 }],
      fields: [],
      rowCount: 1,
      command: 'SELECT',
      executionTime: 0.4,
      statement: 'SELECT 1 AS one',
    };
    expect(() =>
      contract.expectDocumented({ ...answer, body: select }, '/api/query', 'post'),
    ).toThrow(/required header Server-Timing/);
    const timed = {
      ...answer.headers,
      'server-timing': 'pool;dur=0.010, exec;dur=0.400, ser;dur=0.001',
    };
    expect(() =>
      contract.expectDocumented({ ...answer, body: select, headers: timed }, '/api/query', 'post'),
    ).not.toThrow();
    const refused = {
      status: 502,
      headers: timed,
      body: { error: { message: 'refused', code: 'ECONNREFUSED' } },
    };
    expect(() => contract.expectDocumented(refused, '/api/query', 'post')).not.toThrow();
    expect(() =>
      contract.expectDocumented(
        { ...refused, body: { error: { message: 'refused' } } },
        '/api/query',
        'post',
      ),
    ).toThrow(/does not match/);
    expect(() =>
      contract.expectDocumented({ ...refused, status: 503 }, '/api/query', 'post'),
    ).toThrow(/required header Retry-After/);
    const invalid = {
      status: 400,
      headers: answer.headers,
      body: { error: 'Request body is not valid JSON', extra: 1 },
    };
    expect(() => contract.expectDocumented(invalid, '/api/query', 'post')).toThrow(
      /does not match/,
    );
  });
});
