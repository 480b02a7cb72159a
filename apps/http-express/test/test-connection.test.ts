/**
 * POST /api/test-connection: one connection outside the pools, with the status rules of
 * docs/decisions.md 5 and the TLS rules of section 7.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import request from 'supertest';
import { createTestApp, database, target, type TestApp } from './support';

let testApp: TestApp;
const check = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/test-connection').send(body);

beforeAll(() => {
  // A login with TLS and SCRAM takes a loaded machine well over a second at times.
  testApp = createTestApp({ connectTimeoutMs: 30_000 });
});
afterAll(() => testApp.close());

it('succeeds with what it found: server version, database, user, TLS and latency', async () => {
  const response = await check(target()).expect(200);
  expect(response.body).toEqual({
    success: true,
    message: 'Connection successful',
    serverVersion: expect.stringMatching(/^\d+/),
    database: database.database,
    user: database.user,
    ssl: database.tls,
    latencyMs: expect.any(Number),
  });
  expect(response.body.latencyMs).toBeGreaterThan(0);
});

it('names unknown fields in warnings, on success and on failure, and ignores them', async () => {
  const ok = await check({ ...target(), sslmode: 'require', timeout: 5 }).expect(200);
  expect(ok.body).toMatchObject({
    success: true,
    warnings: ["unknown field 'sslmode' (did you mean 'sslMode'?)", "unknown field 'timeout'"],
  });
  const refused = await check({ ...target({ host: '127.0.0.1', port: 1 }), databse: 'x' });
  expect(refused.status).toBeGreaterThanOrEqual(400);
  expect(refused.body).toMatchObject({
    success: false,
    warnings: ["unknown field 'databse' (did you mean 'database'?)"],
  });
});

it("connects to 'postgres' when no database is named", async () => {
  const response = await check(target({ database: undefined })).expect(200);
  expect(response.body).toMatchObject({ success: true, database: 'postgres' });
});

it('follows sslMode', async () => {
  expect((await check(target({ sslMode: 'disable' })).expect(200)).body.ssl).toBe(false);
  if (database.tls)
    expect((await check(target({ sslMode: 'require' })).expect(200)).body.ssl).toBe(true);
});

it('a wrong password: 400 with 28P01', async () => {
  const response = await check(target({ password: 'not-the-password' })).expect(400);
  expect(response.body).toEqual({
    success: false,
    error: { message: expect.stringMatching(/password authentication failed/), code: '28P01' },
  });
});

it('no password where the server asks for one: 400 with 28000', async () => {
  const response = await check(target({ password: undefined })).expect(400);
  expect(response.body).toEqual({
    success: false,
    error: { message: 'The server requires a password and none was given', code: '28000' },
  });
});

it('an unknown database: 400 with 3D000', async () => {
  const response = await check(target({ database: 'no_such_database' })).expect(400);
  expect(response.body).toMatchObject({ success: false, error: { code: '3D000' } });
});

it('missing fields: 400', async () => {
  const response = await check({ host: database.host }).expect(400);
  expect(response.body).toEqual({
    success: false,
    error: { message: 'Missing required fields', code: 'MISSING_FIELDS' },
  });
  await request(testApp.app).post('/api/test-connection').send({}).expect(400);
});

it('nothing listening: 502 ECONNREFUSED', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const response = await check(target({ host: '127.0.0.1', port })).expect(502);
  expect(response.body).toEqual({
    success: false,
    error: { message: expect.any(String), code: 'ECONNREFUSED' },
  });
});

it('a server that never answers: 504 ETIMEDOUT after the connect timeout', async () => {
  const held = new Set<Socket>();
  const silent = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => undefined).resume();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const impatient = createTestApp({ connectTimeoutMs: 300 });
  try {
    // The server never answers: only the connect timeout can end the check (ETIMEDOUT).
    const response = await request(impatient.app)
      .post('/api/test-connection')
      .send(target({ host: '127.0.0.1', port: (silent.address() as AddressInfo).port }))
      .expect(504);
    expect(response.body).toEqual({
      success: false,
      error: { message: expect.any(String), code: 'ETIMEDOUT' },
    });
  } finally {
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    await impatient.close();
  }
});

it('is not pooled: the pool statistics do not change', async () => {
  const app = createTestApp();
  try {
    await request(app.app).post('/api/test-connection').send(target()).expect(200);
    await request(app.app)
      .post('/api/test-connection')
      .send(target({ password: 'wrong' }))
      .expect(400);
    expect((await request(app.app).get('/api/stats/pools').expect(200)).body).toEqual({
      stats: [],
    });

    await request(app.app)
      .post('/api/query')
      .send(target({ sql: 'SELECT 1' }))
      .expect(200);
    const before = (await request(app.app).get('/api/stats/pools')).body;
    await request(app.app).post('/api/test-connection').send(target()).expect(200);
    expect((await request(app.app).get('/api/stats/pools')).body).toEqual(before);
  } finally {
    await app.close();
  }
});
