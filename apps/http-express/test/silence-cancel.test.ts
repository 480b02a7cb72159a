/**
 * A server silent past a request's limit (docs/decisions.md 10.6) has its statement cancelled as
 * the connection is closed: a closed socket alone leaves the backend running its statement to the
 * end, a server connection no pool counts any more.
 */
import { eventually } from '@sqlgate/testing';
import { createTestApp, sql, target, type TestApp } from './support';
import request from 'supertest';

let testApp: TestApp;
beforeAll(() => {
  testApp = createTestApp();
});
afterAll(() => testApp.close());

it('cancels the statement of a connection closed for its silence', async () => {
  const marker = `silence_cancel_${Date.now()}`;
  const answer = await request(testApp.app)
    .post('/api/query')
    .send({
      ...target(),
      // The statement lifts its own statement_timeout: only the silence limit stops it.
      sql: `SELECT set_config('statement_timeout', '0', true); SELECT pg_sleep(60) AS ${marker}`,
      timeoutMs: 100,
    });
  expect(answer.status).toBe(504);
  expect(answer.body.error.code).toBe('ETIMEDOUT');
  await eventually(async () => {
    const running = await sql(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()',
      [`%${marker}%`],
    );
    expect(running).toEqual([{ n: 0 }]);
  });
});
