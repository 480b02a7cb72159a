/**
 * The slow-query log (docs/decisions.md 10.25): statements slower than SLOW_QUERY_MS are logged at
 * warn with their literals replaced, their duration, pool and request id; faster ones are not.
 */
import { startServer } from '../src/server';
import { captureLogs, database, target } from './support';

const capture = () => captureLogs('warn');
/**
 * SLOW_QUERY_MS here, and the sleep of the one slow statement: far above what the fast statements
 * take even on a loaded machine, so that which statements are slow does not depend on its load.
 */
const SLOW_QUERY_MS = 1500;
const SLOW_SECONDS = 2;

it('logs the statements slower than SLOW_QUERY_MS, without their literals', async () => {
  const { logger, lines } = capture();
  await using server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logger,
    slowQueryMs: SLOW_QUERY_MS,
  });
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'slow-1' },
    body: JSON.stringify({
      ...target(),
      sql: `SELECT 1; SELECT pg_sleep(${SLOW_SECONDS}), 'card 4111-1111' AS secret; SELECT 3`,
    }),
  });
  expect(response.status).toBe(200);
  await response.text();

  const slow = lines().filter((line) => line.msg === 'slow statement');
  expect(slow).toHaveLength(1);
  expect(slow[0]).toMatchObject({
    level: 40,
    reqId: 'slow-1',
    poolId: `${database.host}:${database.port}:${database.user}:${database.database}`,
    index: 1,
    command: 'SELECT',
    outcome: 'ok',
    statement: 'SELECT pg_sleep($1), $2 AS secret',
  });
  expect(slow[0]?.durationMs).toBeGreaterThanOrEqual(SLOW_QUERY_MS);
  expect(JSON.stringify(lines())).not.toContain('4111');
});

it('times each statement of a transaction on its own, and logs the slow one', async () => {
  const { logger, lines } = capture();
  await using server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    logger,
    slowQueryMs: SLOW_QUERY_MS,
  });
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      ...target(),
      sql: `CREATE TEMP TABLE slow_t (a int); INSERT INTO slow_t VALUES (1); SELECT pg_sleep(${SLOW_SECONDS}); DELETE FROM slow_t`,
    }),
  });
  const body = (await response.json()) as { results: { executionTime: number }[] };
  expect(response.status).toBe(200);
  const times = body.results.map((result) => result.executionTime);
  // Each step is timed from the previous step's answer arriving: the server may begin the sleep a
  // moment before that answer reaches sqlgate, so a few milliseconds less than the sleep are possible.
  expect(times[2]).toBeGreaterThanOrEqual(SLOW_SECONDS * 1000 - 20);
  for (const index of [0, 1, 3]) expect(times[index]).toBeLessThan(SLOW_QUERY_MS);
  const slow = lines().filter((line) => line.msg === 'slow statement');
  expect(slow.map((line) => [line.index, line.statement])).toEqual([[2, 'SELECT pg_sleep($1)']]);
});
