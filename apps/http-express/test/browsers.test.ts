/**
 * Web pages cannot drive sqlgate (docs/decisions.md 10.16): only JSON bodies are accepted, a foreign
 * Origin is refused unless listed in CORS_ORIGINS, and a loopback server refuses foreign Host names
 * (DNS rebinding). Checked on the Express app and on the standalone server's direct query path,
 * against a real server and a real PostgreSQL: a refused request must not have run its SQL.
 */
import request from 'supertest';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { Contract } from './openapi/contract';
import { rawExchange, rawRequest } from './raw-http';
import { createTestApp, sql, target, type TestApp } from './support';

const probe = `browsers_probe_${process.pid}`;
const LISTED = 'https://console.example.com';
const contract = new Contract();

/** A query body that leaves a trace when it runs. */
const insertBody = (label: string): string =>
  JSON.stringify(target({ sql: `INSERT INTO ${probe} VALUES ('${label}')` }));

const ranLabels = async (): Promise<string[]> =>
  (await sql(`SELECT label FROM ${probe} ORDER BY label`)).map((row) => String(row.label));

let testApp: TestApp;
let loopback: RunningServer;
let wildcard: RunningServer;
beforeAll(async () => {
  await sql(`DROP TABLE IF EXISTS ${probe}; CREATE TABLE ${probe} (label text)`);
  testApp = createTestApp({ corsOrigins: [LISTED] });
  loopback = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    corsOrigins: [LISTED],
  });
  wildcard = await startServer({ port: 0, hostname: '0.0.0.0', logLevel: 'silent' });
});
afterAll(async () => {
  await Promise.all([testApp.close(), loopback.close(), wildcard.close()]);
  await sql(`DROP TABLE IF EXISTS ${probe}`);
});
beforeEach(() => sql(`TRUNCATE ${probe}`));

/** POST /api/query to the loopback server (the direct path), as a page would send it. */
const postQuery = (label: string, headers: Record<string, string>, server = loopback) =>
  rawRequest({
    port: server.port,
    method: 'POST',
    path: '/api/query',
    headers: { host: `127.0.0.1:${server.port}`, ...headers },
    body: insertBody(label),
  });

describe('Content-Type: only application/json bodies are accepted', () => {
  const refusedTypes = [
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=latin1',
    'application/jsonx',
  ];

  it.each(refusedTypes)(
    'refuses %s with 415 on the direct path; the SQL did not run',
    async (type) => {
      const response = await postQuery('direct', { 'content-type': type });
      expect(response.status).toBe(415);
      expect(response.json()).toEqual({
        error: expect.stringContaining('application/json') as string,
      });
      expect(await ranLabels()).toEqual([]);
    },
  );

  it('refuses a body without Content-Type with 415', async () => {
    const response = await postQuery('untyped', {});
    expect(response.status).toBe(415);
    expect(await ranLabels()).toEqual([]);
  });

  it.each(['/api/query', '/api/test-connection'])(
    'refuses text/plain with 415 on the app’s %s; the SQL did not run',
    async (path) => {
      const response = await request(testApp.app)
        .post(path)
        .set('content-type', 'text/plain')
        .send(insertBody('app'))
        .expect(415);
      expect(response.body).toEqual({
        error: "Content-Type must be application/json, got 'text/plain'",
      });
      contract.expectDocumented(response, path, 'post');
      expect(await ranLabels()).toEqual([]);
    },
  );

  it('accepts application/json with parameters, on both paths', async () => {
    const direct = await postQuery('direct', {
      'content-type': 'Application/JSON; charset="utf-8"',
    });
    expect(direct.status).toBe(200);
    await request(testApp.app)
      .post('/api/query')
      .set('content-type', 'application/json; charset=utf-8')
      .send(insertBody('app'))
      .expect(200);
    expect(await ranLabels()).toEqual(['app', 'direct']);
  });
});

describe('Origin: foreign pages are refused unless listed in CORS_ORIGINS', () => {
  const json = { 'content-type': 'application/json' };

  it.each([
    'http://evil.example',
    'null',
    `http://127.0.0.1:1`,
    'https://console.example.com.evil',
  ])('refuses Origin %s with 403 on the direct path; the SQL did not run', async (origin) => {
    const response = await postQuery('foreign', { ...json, origin });
    expect(response.status).toBe(403);
    expect(response.json()).toEqual({ error: `Origin '${origin}' is not allowed` });
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(await ranLabels()).toEqual([]);
  });

  it('refuses a foreign Origin on the app’s endpoints, statistics included', async () => {
    const query = await request(testApp.app)
      .post('/api/query')
      .set('origin', 'http://evil.example')
      .send(JSON.parse(insertBody('app')) as object)
      .expect(403, { error: "Origin 'http://evil.example' is not allowed" });
    contract.expectDocumented(query, '/api/query', 'post');
    const endpoints: [string, 'get' | 'delete' | 'post'][] = [
      ['/api/test-connection', 'post'],
      ['/api/stats/pools', 'get'],
      ['/api/stats/cache', 'get'],
      ['/api/stats/cache', 'delete'],
      ['/healthz', 'get'],
      ['/api/openapi.json', 'get'],
    ];
    for (const [path, method] of endpoints) {
      for (const origin of ['http://evil.example', 'null']) {
        const answer = await request(testApp.app)[method](path).set('origin', origin);
        expect({ path, method, origin, status: answer.status }).toEqual({
          path,
          method,
          origin,
          status: 403,
        });
        contract.expectDocumented(answer, path, method);
      }
    }
    expect(await ranLabels()).toEqual([]);
  });

  it('accepts sqlgate’s own origin (same scheme, host and port as the Host)', async () => {
    const own = `http://127.0.0.1:${loopback.port}`;
    const response = await postQuery('own', { ...json, origin: own });
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    const stats = await rawRequest({
      port: loopback.port,
      path: '/api/stats/pools',
      headers: { host: `localhost:${loopback.port}`, origin: `http://localhost:${loopback.port}` },
    });
    expect(stats.status).toBe(200);
    // Same host, other scheme: another origin.
    expect(
      (await postQuery('https', { ...json, origin: `https://127.0.0.1:${loopback.port}` })).status,
    ).toBe(403);
    expect(await ranLabels()).toEqual(['own']);
  });

  it('answers a listed origin with CORS headers on both paths', async () => {
    const direct = await postQuery('listed', { ...json, origin: LISTED });
    expect(direct.status).toBe(200);
    expect(direct.headers['access-control-allow-origin']).toBe(LISTED);
    // The answer also depends on Accept (a streamed answer, docs/decisions.md 10.22).
    expect(direct.headers.vary).toBe('Origin, Accept');
    expect(direct.headers['access-control-expose-headers']).toContain('X-Request-Id');
    const stats = await request(testApp.app)
      .get('/api/stats/cache')
      .set('origin', LISTED)
      .expect(200);
    expect(stats.headers['access-control-allow-origin']).toBe(LISTED);
    expect(stats.headers.vary).toBe('Origin');
    expect(await ranLabels()).toEqual(['listed']);
  });

  it('answers the preflight of a listed origin, and refuses an unlisted one', async () => {
    const preflight = (origin: string) =>
      rawRequest({
        port: loopback.port,
        method: 'OPTIONS',
        path: '/api/query',
        headers: {
          host: `127.0.0.1:${loopback.port}`,
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, x-request-id',
        },
      });
    const listed = await preflight(LISTED);
    expect(listed.status).toBe(204);
    expect(listed.headers['access-control-allow-origin']).toBe(LISTED);
    expect(listed.headers['access-control-allow-methods']).toBe('GET, POST, DELETE');
    expect(listed.headers['access-control-allow-headers']).toBe(
      'Content-Type, Authorization, X-Request-Id, Sqlgate-Consistency-Token, ' +
        'Neon-Connection-String, Neon-Raw-Text-Output, ' +
        'Neon-Array-Mode, Neon-Batch-Isolation-Level, Neon-Batch-Read-Only, Neon-Batch-Deferrable, ' +
        'Sqlgate-Session',
    );
    expect(Number(listed.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(listed.headers.vary).toBe('Origin');
    const unlisted = await preflight('http://evil.example');
    expect(unlisted.status).toBe(403);
    expect(unlisted.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('still answers requests without Origin (curl, servers) as before', async () => {
    expect((await postQuery('plain', json)).status).toBe(200);
    expect(await ranLabels()).toEqual(['plain']);
  });
});

describe('Host: a loopback server refuses foreign names (DNS rebinding)', () => {
  const healthz = (server: RunningServer, host: string) =>
    rawRequest({ port: server.port, path: '/healthz', headers: { host } });
  const query = (server: RunningServer, host: string, label: string) =>
    postQuery(label, { host, 'content-type': 'application/json' }, server);

  it('refuses Host evil.example with 403 on both paths; the SQL did not run', async () => {
    const port = loopback.port;
    const direct = await query(loopback, `evil.example:${port}`, 'rebound');
    expect(direct.status).toBe(403);
    expect(direct.json()).toEqual({ error: `Host 'evil.example:${port}' is not allowed` });
    // With the page's own origin, as after DNS rebinding: still refused.
    const rebound = await postQuery('rebound', {
      host: `evil.example:${port}`,
      origin: `http://evil.example:${port}`,
      'content-type': 'application/json',
    });
    expect(rebound.status).toBe(403);
    expect((await healthz(loopback, 'evil.example')).status).toBe(403);
    expect((await healthz(loopback, 'x@127.0.0.1')).status).toBe(403);
    expect(await ranLabels()).toEqual([]);
  });

  it.each([
    'localhost',
    'LOCALHOST:1234',
    'app.localhost',
    '127.0.0.1',
    '127.3.4.5:80',
    '[::1]:3000',
  ])('accepts the loopback Host %s', async (host) => {
    expect((await healthz(loopback, host)).status).toBe(200);
  });

  it('refuses several Host lines with 400, whichever comes first, on both paths', async () => {
    const port = loopback.port;
    for (const [first, second] of [
      ['localhost', 'evil.example'],
      ['evil.example', 'localhost'],
      ['localhost', 'localhost'],
    ]) {
      for (const line of ['GET /healthz', 'POST /api/query']) {
        const body = line.startsWith('POST') ? insertBody('twice') : '';
        const answer = await rawExchange(
          port,
          `${line} HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
            `Connection: close\r\n\r\n${body}`,
        );
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toEqual({
          error: 'A request must send one Host header, not several',
        });
      }
    }
    expect(await ranLabels()).toEqual([]);
  });

  it("checks an absolute-form target's authority, which replaces Host", async () => {
    const port = loopback.port;
    const send = (url: string, host: string, label: string) => {
      const body = insertBody(label);
      return rawExchange(
        port,
        `POST ${url} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    const foreign = await send('http://evil.example/api/query', `localhost:${port}`, 'foreign');
    expect(foreign).toMatch(/^HTTP\/1\.1 403 /);
    expect(foreign).toContain(`"Host 'evil.example' is not allowed"`);
    const own = await send(`http://localhost:${port}/api/query`, 'evil.example', 'own');
    expect(own).toMatch(/^HTTP\/1\.1 200 /);
    expect(await ranLabels()).toEqual(['own']);
  });

  it('accepts the names of ALLOWED_HOSTS besides loopback names', async () => {
    const server = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      allowedHosts: ['sqlgate.internal'],
    });
    try {
      expect((await query(server, `sqlgate.internal:${server.port}`, 'allowed')).status).toBe(200);
      expect((await healthz(server, 'localhost')).status).toBe(200);
      expect((await healthz(server, 'evil.example')).status).toBe(403);
    } finally {
      await server.close();
    }
    expect(await ranLabels()).toEqual(['allowed']);
  });

  it('does not check Host on a server bound to 0.0.0.0, unless ALLOWED_HOSTS is set', async () => {
    expect((await query(wildcard, 'sqlgate.example.com', 'public')).status).toBe(200);
    const restricted = await startServer({
      port: 0,
      hostname: '0.0.0.0',
      logLevel: 'silent',
      allowedHosts: ['sqlgate.example.com'],
    });
    try {
      expect((await healthz(restricted, 'sqlgate.example.com')).status).toBe(200);
      expect((await query(restricted, 'evil.example', 'refused')).status).toBe(403);
    } finally {
      await restricted.close();
    }
    expect(await ranLabels()).toEqual(['public']);
  });
});

describe('configuration', () => {
  it('reads CORS_ORIGINS and ALLOWED_HOSTS as comma lists', () => {
    const config = loadConfig({
      CORS_ORIGINS: 'https://a.example, http://localhost:5173/',
      ALLOWED_HOSTS: 'sqlgate.internal, ::1',
    });
    expect(config.corsOrigins).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(config.allowedHosts).toEqual(['sqlgate.internal', '[::1]']);
    expect(loadConfig({}).corsOrigins).toBeUndefined();
  });

  it.each<[string, string]>([
    ['CORS_ORIGINS', '*'],
    ['CORS_ORIGINS', 'null'],
    ['CORS_ORIGINS', 'https://a.example/app'],
    ['CORS_ORIGINS', 'a.example'],
    ['ALLOWED_HOSTS', 'sqlgate.internal:3000'],
    ['ALLOWED_HOSTS', 'http://sqlgate.internal'],
  ])('stops start-up on %s=%s with one line naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      new RegExp(`^${name} must be a comma list: .*'`),
    );
  });
});
