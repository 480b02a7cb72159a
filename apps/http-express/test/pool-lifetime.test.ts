/**
 * docs/decisions.md 10.19: pooled connections live at most POOL_MAX_LIFETIME_MS, so a changed
 * password or a revoked login takes effect within that time, not whenever the pool happens to
 * close its idle clients.
 */
import request from 'supertest';
import { loadConfig } from '../src/config';
import { createTestApp, sql, target, type TestApp } from './support';

const LIFETIME_MS = 800;
const ROLE = 'lifetime_alice';
let testApp: TestApp;

const queryAs = (password: string) =>
  request(testApp.app)
    .post('/api/query')
    .send(target({ user: ROLE, password, sql: 'SELECT current_user AS who' }));

/** Several requests at once, so the pool holds more than one connection opened with `password`. */
async function fillPool(password: string): Promise<void> {
  const responses = await Promise.all([queryAs(password), queryAs(password), queryAs(password)]);
  for (const response of responses) expect(response.status).toBe(200);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  await sql(`DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE}; END IF;
  END $$`);
  await sql(`ALTER ROLE ${ROLE} LOGIN PASSWORD 'old-secret'`);
  // A long idle timeout: only the lifetime may close the connections.
  testApp = createTestApp({
    poolMax: 3,
    poolIdleTimeoutMs: 60_000,
    poolMaxLifetimeMs: LIFETIME_MS,
  });
});
afterAll(() => testApp.close());

it('defaults to 30 minutes and refuses a value that is not a positive integer', () => {
  expect(loadConfig({}).poolMaxLifetimeMs).toBe(30 * 60_000);
  expect(loadConfig({ POOL_MAX_LIFETIME_MS: '5000' }).poolMaxLifetimeMs).toBe(5000);
  expect(() => loadConfig({ POOL_MAX_LIFETIME_MS: '0' })).toThrow(/POOL_MAX_LIFETIME_MS/);
  expect(() => loadConfig({ POOL_MAX_LIFETIME_MS: '1.5' })).toThrow(/POOL_MAX_LIFETIME_MS/);
});

it('stops accepting an old password within the lifetime after ALTER ROLE ... PASSWORD', async () => {
  await fillPool('old-secret');
  await sql(`ALTER ROLE ${ROLE} PASSWORD 'new-secret'`);
  // The pooled connections were opened with the old password and are still alive...
  expect((await queryAs('old-secret')).status).toBe(200);
  await sleep(LIFETIME_MS + 400);
  // ...until their lifetime ends: a new connection must log in, and the old password is refused.
  const old = await queryAs('old-secret');
  expect(old.status).not.toBe(200);
  expect(old.body.error.code).toBe('28P01');
  expect((await queryAs('new-secret')).status).toBe(200);
});

it('stops accepting a role within the lifetime after ALTER ROLE ... NOLOGIN', async () => {
  await sql(`ALTER ROLE ${ROLE} LOGIN PASSWORD 'new-secret'`);
  await fillPool('new-secret');
  await sql(`ALTER ROLE ${ROLE} NOLOGIN`);
  expect((await queryAs('new-secret')).status).toBe(200);
  await sleep(LIFETIME_MS + 400);
  const refused = await queryAs('new-secret');
  expect(refused.status).not.toBe(200);
  expect(refused.body.error.code).toBe('28000');
});
