/** The standalone server answers POST /api/query without Express: the same answers as the app. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { QueryService } from '@sqlgate/core';
import { startServer, type RunningServer } from '../src/server';
import { createTestApp, target, type TestApp } from './support';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    maxBodyBytes: 2048,
  });
});
afterAll(() => server.close());

const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

it('runs a query and answers with the result, Server-Timing and the request id', async () => {
  const response = await post(JSON.stringify(target({ sql: 'SELECT 1 AS one' })), {
    'x-request-id': 'direct-1',
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.headers.get('x-request-id')).toBe('direct-1');
  expect(response.headers.get('server-timing')).toMatch(/^pool;dur=/);
  expect(((await response.json()) as { rows: unknown[] }).rows).toEqual([{ one: 1 }]);
});

it('answers invalid JSON, a body over MAX_BODY_BYTES and a missing body as the app does', async () => {
  const invalid = await post('{"host":');
  expect(invalid.status).toBe(400);
  expect(await invalid.json()).toEqual({ error: 'Request body is not valid JSON' });
  const large = await post(JSON.stringify(target({ sql: `SELECT '${'x'.repeat(4096)}'` })));
  expect(large.status).toBe(413);
  expect(await large.json()).toEqual({ error: 'Request body too large' });
  const empty = await post('');
  expect(empty.status).toBe(400);
  expect(await empty.json()).toEqual({
    error: 'Missing required fields',
    missing: ['host', 'port', 'user', 'database', 'sql'],
  });
});

it('leaves every other request to the app', async () => {
  expect((await fetch(`${server.url}/api/query?x=1`, { method: 'GET' })).status).toBe(405);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
});

describe('the same headers as the app', () => {
  const config = { maxBodyBytes: 2048, corsOrigins: ['https://console.example.com'] };
  let direct: RunningServer;
  let appOnly: http.Server;
  let testApp: TestApp;
  let appUrl: string;
  beforeAll(async () => {
    direct = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent', ...config });
    testApp = createTestApp(config);
    appOnly = http.createServer(testApp.app);
    await new Promise<void>((resolve) => appOnly.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(appOnly.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await direct.close();
    await new Promise((resolve) => appOnly.close(resolve));
    await testApp.close();
  });

  /**
   * Names of every header but those of the connection (and X-Powered-By, which the tests' own
   * wrapper app adds), and the values that do not vary.
   */
  async function headersOf(url: string, body: string, headers: Record<string, string>) {
    const response = await fetch(`${url}/api/query`, { method: 'POST', headers, body });
    await response.text();
    const names = [...response.headers.keys()]
      .filter(
        (name) =>
          !['date', 'connection', 'keep-alive', 'transfer-encoding', 'x-powered-by'].includes(name),
      )
      .sort();
    const values = Object.fromEntries(
      names
        .filter((name) => !['x-request-id', 'server-timing', 'content-length'].includes(name))
        .map((name) => [name, response.headers.get(name)]),
    );
    return { status: response.status, names, values, id: response.headers.get('x-request-id') };
  }

  const json = { 'content-type': 'application/json' };
  const query = (sql: string) => JSON.stringify(target({ sql }));
  it.each([
    ['an answer with its own id', query('SELECT 1 AS one'), { ...json, 'x-request-id': 'same-1' }],
    ['an answer with an id made up', query('SELECT 1 AS one'), json],
    ['a failed statement', query('SELECT 1/0'), json],
    ['invalid JSON', '{"host":', json],
    ['a body over MAX_BODY_BYTES', query(`SELECT '${'x'.repeat(4096)}'`), json],
    ['another Content-Type', query('SELECT 1'), { 'content-type': 'text/plain' }],
    ['a listed origin', query('SELECT 1'), { ...json, origin: 'https://console.example.com' }],
    ['an unlisted origin', query('SELECT 1'), { ...json, origin: 'https://evil.example.com' }],
    ['a stream', query('SELECT 1 AS one'), { ...json, accept: 'application/x-ndjson' }],
  ])('%s', async (_case, body, headers: Record<string, string>) => {
    const fromDirect = await headersOf(direct.url, body, headers);
    const fromApp = await headersOf(appUrl, body, headers);
    expect(fromDirect).toMatchObject({
      status: fromApp.status,
      names: fromApp.names,
      values: fromApp.values,
    });
    expect(fromDirect.names).toContain('x-request-id');
    const ownId = headers['x-request-id'];
    if (ownId) expect([fromDirect.id, fromApp.id]).toEqual([ownId, ownId]);
    else expect(fromDirect.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a defect on the direct path', () => {
  it.each([
    ['thrown by the service before any promise', 'throws'],
    ['rejected by the service', 'rejects'],
  ])('%s is answered 500 with the request id, and the server goes on', async (_what, how) => {
    const failing = await startServer({
      port: 0,
      hostname: '127.0.0.1',
      logLevel: 'silent',
      // A service whose answer to a query is a defect; everything else does nothing.
      service: new Proxy({} as QueryService, {
        get: (_target, key) =>
          key === 'stream'
            ? () => {
                if (how === 'throws') throw new Error('defect');
                return Promise.reject(new Error('defect'));
              }
            : () => undefined,
      }),
    });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await fetch(`${failing.url}/api/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': `defect-${attempt}` },
          body: JSON.stringify(target({ sql: 'SELECT 1' })),
        });
        expect(response.status).toBe(500);
        expect(await response.json()).toEqual({
          error: 'Internal server error',
          requestId: `defect-${attempt}`,
        });
      }
    } finally {
      await failing.close();
    }
  });
});
