/**
 * A request that names no target runs on the server's default (docs/decisions.md 10.48), and its
 * cancel by request id names none either: the cancel endpoint reads its body against the same
 * default, instead of refusing it for the fields it lacks.
 */
import { startServer, type RunningServer } from '../src/server';
import { database, sql } from './support';

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logLevel: 'silent',
    configuredTargets: {
      default: {
        host: database.host,
        port: database.port,
        user: database.user,
        password: database.password,
        database: database.database,
        sslMode: database.tls ? 'require' : 'disable',
      },
    },
  });
});
afterAll(() => server.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

it('cancels a request on the default target with a body that names no target', async () => {
  const requestId = `default-target-cancel-${process.pid}`;
  const running = post(
    '/api/query',
    { sql: 'SELECT pg_sleep(60) AS default_target_victim' },
    { 'x-request-id': requestId },
  );
  // Waits until the statement runs: a cancel before it registers cancels nothing.
  for (let tries = 0; ; tries++) {
    const rows = await sql(
      // Not this query itself, whose text holds the marker too.
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%AS default_target_victim%'",
    );
    if (Number(rows[0]?.n) === 1) break;
    if (tries > 300) throw new Error('the statement never started');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const cancel = await post(`/api/requests/${requestId}/cancel`, {});
  expect(cancel.status).toBe(200);
  expect(await cancel.json()).toEqual({ cancelled: true });
  const answer = await running;
  expect(answer.status).toBe(409);
  expect(await answer.json()).toMatchObject({ cancelled: true });
});
