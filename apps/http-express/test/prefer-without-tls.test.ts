/**
 * `sslMode: prefer` (the default) against a server without TLS, the way a stock PostgreSQL image
 * runs (docs/decisions.md 10.18): the fallback to plain is decided per connection attempt, so any
 * number of concurrent first connections all succeed, after every restart and pool eviction too.
 * The tests' usual servers all offer TLS, which is how this once slipped through.
 */
import { startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import request from 'supertest';
import { createTestApp, type TestApp } from './support';

let cluster: LocalCluster;
let testApp: TestApp;

beforeAll(async () => {
  cluster = await startLocalCluster({ tls: false });
}, 60_000);
afterAll(async () => {
  await testApp?.close();
  await cluster?.stop();
});

const plainTarget = (overrides: Record<string, unknown> = {}) => ({
  host: cluster.host,
  port: cluster.port,
  user: cluster.user,
  password: cluster.password,
  database: cluster.database,
  ...overrides,
});

const SSL_SQL =
  'SELECT COALESCE((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS ssl';

async function concurrentFirstRequests(count: number, overrides: Record<string, unknown> = {}) {
  return Promise.all(
    Array.from({ length: count }, () =>
      request(testApp.app)
        .post('/api/query')
        .send(plainTarget({ sql: SSL_SQL, ...overrides })),
    ),
  );
}

it('answers every one of many concurrent first requests with prefer, in plain', async () => {
  testApp = createTestApp({ poolMax: 10 });
  const responses = await concurrentFirstRequests(12);
  expect(responses.map((response) => response.status)).toEqual(Array(12).fill(200));
  expect(responses.every((response) => response.body.rows[0].ssl === false)).toBe(true);
});

it('does the same without any sslMode, and again after the server restarted', async () => {
  await cluster.restart();
  const responses = await concurrentFirstRequests(8, { sslMode: undefined });
  expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
});

it('still refuses require and verify-full against the server without TLS', async () => {
  for (const sslMode of ['require', 'verify-full']) {
    const response = await request(testApp.app)
      .post('/api/query')
      .send(plainTarget({ sql: 'SELECT 1', sslMode }))
      .expect(502);
    expect(response.body.error).toMatchObject({ code: 'SSL_NOT_SUPPORTED' });
  }
});

it('test-connection with prefer falls back to plain too', async () => {
  const response = await request(testApp.app)
    .post('/api/test-connection')
    .send(plainTarget({ sslMode: 'prefer' }))
    .expect(200);
  expect(response.body).toMatchObject({ success: true, ssl: false });
});
