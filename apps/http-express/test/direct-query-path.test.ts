/** The standalone server answers POST /api/query without Express: the same answers as the app. */
import { startServer, type RunningServer } from '../src/server';
import { target } from './support';

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
