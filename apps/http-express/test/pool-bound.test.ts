/**
 * POOL_TARGETS_MAX is a bound (docs/decisions.md 10.43): while sessions hold a connection of every
 * pool, a request for another target gets no pool past it. It waits POOL_WAIT_TIMEOUT_MS for one
 * to come free, then is answered 503 POOL_EXHAUSTED with Retry-After, and is served once a session
 * ends. Against sqlgate's HTTP server and a real PostgreSQL.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, target, type TestApp } from './support';

let testApp: TestApp;
let server: Server;
let url: string;

beforeAll(async () => {
  // pg-pool bounds each new connection's login by the wait too: it must fit on a busy machine.
  testApp = createTestApp({ poolTargetsMax: 1, poolWaitTimeoutMs: 3000 });
  server = testApp.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await testApp.close();
});

async function call(method: string, path: string, body?: Record<string, unknown>) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
  };
}

it('refuses a new target with 503 while a session holds the only pool, and serves it after', async () => {
  // Another sslMode is another pool of the same database.
  const held = target({ sslMode: 'disable' });
  const other = target({ sslMode: 'require', sql: 'SELECT 1 AS one' });
  const opened = await call('POST', '/api/sessions', held);
  expect(opened.status).toBe(201);
  const { sessionId } = opened.body as { sessionId: string };
  try {
    const refused = await call('POST', '/api/query', other);
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'POOL_EXHAUSTED' } } });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(testApp.service.poolStats()).toHaveLength(1);
  } finally {
    expect((await call('DELETE', `/api/sessions/${sessionId}`)).status).toBe(200);
  }
  const served = await call('POST', '/api/query', other);
  expect(served).toMatchObject({ status: 200, body: { rows: [{ one: 1 }] } });
});
