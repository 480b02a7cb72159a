/**
 * Several reads of one request when the pool cannot lend a connection per read (docs/decisions.md
 * 10.29): they take turns on one connection and answer exactly as when each had its own.
 */
import request from 'supertest';
import { createTestApp, directClient, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

beforeAll(() => {
  testApp = createTestApp({ poolMax: 3 });
});
afterAll(() => testApp.close());

/** Holds `count` of the pool's connections in pg_sleep until the returned function is awaited. */
async function occupy(count: number, seconds: number): Promise<() => Promise<void>> {
  const sleeps = Array.from({ length: count }, () =>
    query({ sql: `SELECT pg_sleep(${seconds}), 'busy-pool-probe'` }).then(() => undefined),
  );
  const probe = await directClient();
  try {
    for (let tries = 0; tries < 200; tries++) {
      const { rows } = await probe.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(%busy-pool-probe%'",
      );
      if (rows[0].n === count) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await probe.end();
  }
  return () => Promise.all(sleeps).then(() => undefined);
}

/** What a caller can compare of two answers: everything but the timings. */
function withoutTimes(body: Record<string, unknown>): unknown {
  return JSON.parse(
    JSON.stringify(body, (key, value) =>
      key === 'executionTime' || key === 'totalExecutionTime' ? undefined : value,
    ),
  );
}

const SCRIPTS = [
  'SELECT 1 AS a; SELECT 2 AS b; SELECT 3 AS c',
  'SELECT 1 AS a; SELECT 1/0 AS b; SELECT 3 AS c',
  'SELECT 1/0 AS a; SELECT * FROM no_such_table; SELECT 3 AS c; SELECT 4 AS d',
  "SELECT x FROM generate_series(1, 5) x; SELECT 'text'::int; SELECT current_setting('transaction_read_only') AS ro",
  // Row limits apply read by read within the shared round trip.
  'SELECT x FROM generate_series(1, 50) x; SELECT 2 AS b; SELECT x FROM generate_series(1, 3) x',
  'SELECT 1 AS a; SELECT 2 AS b; SELECT 3/0 AS c',
];

describe('reads on a busy pool', () => {
  it.each(SCRIPTS)('answer %j as they do on an idle pool', async (sql) => {
    const idle = await query({ sql, maxRows: 10 });
    const release = await occupy(2, 1);
    try {
      const busy = await query({ sql, maxRows: 10 });
      expect(busy.status).toBe(idle.status);
      expect(withoutTimes(busy.body)).toEqual(withoutTimes(idle.body));
    } finally {
      await release();
    }
  });

  it('share the one connection left: the request does not wait for the pool', async () => {
    const release = await occupy(2, 2);
    try {
      const response = await query({
        sql: 'SELECT pg_sleep(0.2), pg_backend_pid() AS pid; SELECT pg_sleep(0.2), pg_backend_pid() AS pid; SELECT pg_sleep(0.2), pg_backend_pid() AS pid',
      }).expect(200);
      const pids = response.body.results.map(
        (result: { rows: { pid: number }[] }) => result.rows[0]?.pid,
      );
      expect(new Set(pids).size).toBe(1);
      // A connection per read would have the second and third wait for the first one's return.
      const poolWaitMs = Number(
        /pool;dur=([\d.]+)/.exec(response.headers['server-timing'] ?? '')?.[1],
      );
      expect(poolWaitMs).toBeLessThan(150);
      expect(response.body).not.toHaveProperty('transactionUsed');
    } finally {
      await release();
    }
  });

  it('share one READ ONLY transaction at READ COMMITTED, and keep one each at REPEATABLE READ', async () => {
    const sql = 'SELECT transaction_timestamp() AS t, pg_sleep(0.01); '.repeat(3);
    const release = await occupy(2, 2);
    try {
      const times = async (isolationLevel?: string) => {
        const response = await query({ sql, ...(isolationLevel ? { isolationLevel } : {}) });
        expect(response.status).toBe(200);
        return new Set(
          response.body.results.map((result: { rows: { t: string }[] }) => result.rows[0]?.t),
        );
      };
      // Each read still takes its own snapshot at READ COMMITTED: sharing changes no rows.
      expect((await times()).size).toBe(1);
      expect((await times('read committed')).size).toBe(1);
      // One snapshot for all would change what they read: each has a transaction of its own.
      expect((await times('repeatable read')).size).toBe(3);
      expect((await times('serializable')).size).toBe(3);
    } finally {
      await release();
    }
  });

  it('give the reads after one whose backend was terminated another connection', async () => {
    const release = await occupy(2, 2);
    const killer = await directClient();
    try {
      // then(): supertest sends a request only once its answer is asked for.
      const pending = query({
        sql: "SELECT 1 AS a; SELECT pg_sleep(1.5), 'busy-pool-kill' AS s; SELECT 3 AS c",
      }).then((answer) => answer);
      // Killed in its sleep, not while being parsed: a statement killed before anything of it
      // ran is sent to another connection (docs/decisions.md 6).
      for (let tries = 0; tries < 100; tries++) {
        const { rowCount } = await killer.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%busy-pool-kill%' AND pid <> pg_backend_pid()",
        );
        if (rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const response = await pending;
      // As on an idle pool: the terminated read says so, the others answer.
      expect(response.body.results[0].rows).toEqual([{ a: 1 }]);
      expect(response.body.results[1].cause.code).toBe('57P01');
      expect(response.body.results[2].rows).toEqual([{ c: 3 }]);
    } finally {
      await killer.end();
      await release();
    }
  });
});
