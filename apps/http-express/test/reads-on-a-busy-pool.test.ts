/**
 * Several reads of one request when the pool cannot lend a connection per read (docs/decisions.md
 * 10.29): they take turns on one connection and answer exactly as when each had its own.
 */
import { eventually } from '@sqlgate/testing';
import request from 'supertest';
import { createTestApp, directClient, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

beforeAll(() => {
  testApp = createTestApp({ poolMax: 3 });
});
afterAll(() => testApp.close());

const OCCUPY_LOCK = 4545;

/**
 * Holds `count` of the pool's connections until the returned function is awaited: their statements
 * wait for a lock the test holds, however long the test takes.
 */
async function occupy(count: number): Promise<() => Promise<void>> {
  const holder = await directClient();
  await holder.query('SELECT pg_advisory_lock($1)', [OCCUPY_LOCK]);
  const waiting = Array.from({ length: count }, () =>
    query({ sql: `SELECT 1 FROM pg_advisory_xact_lock_shared(${OCCUPY_LOCK})` }).then(
      () => undefined,
    ),
  );
  await eventually(async () => {
    const { rows } = await holder.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE $1",
      [`%pg_advisory_xact_lock_shared(${OCCUPY_LOCK})%`],
    );
    return rows[0].n === count;
  });
  return async () => {
    await holder.query('SELECT pg_advisory_unlock($1)', [OCCUPY_LOCK]);
    await holder.end();
    await Promise.all(waiting);
  };
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
    const release = await occupy(2);
    try {
      const busy = await query({ sql, maxRows: 10 });
      expect(busy.status).toBe(idle.status);
      expect(withoutTimes(busy.body)).toEqual(withoutTimes(idle.body));
    } finally {
      await release();
    }
  });

  it('share the one connection left: the request does not wait for the pool', async () => {
    const release = await occupy(2);
    try {
      const read = 'SELECT pg_sleep(0.2), pg_backend_pid() AS pid, transaction_timestamp() AS t';
      const response = await query({ sql: `${read}; ${read}; ${read}` }).expect(200);
      const taken = response.body.results.map(
        (result: { rows: { pid: number; t: string }[] }) => result.rows[0],
      );
      // A connection per read would have the second and third wait for the first one's return,
      // and run a transaction each: one transaction on one backend, the connection was taken once.
      expect(new Set(taken.map((row: { pid: number }) => row.pid)).size).toBe(1);
      expect(new Set(taken.map((row: { t: string }) => row.t)).size).toBe(1);
      expect(response.body).not.toHaveProperty('transactionUsed');
    } finally {
      await release();
    }
  });

  it('share one READ ONLY transaction at READ COMMITTED, and keep one each at REPEATABLE READ', async () => {
    const sql = 'SELECT transaction_timestamp() AS t, pg_sleep(0.01); '.repeat(3);
    const release = await occupy(2);
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
    const release = await occupy(2);
    const killer = await directClient();
    try {
      // then(): supertest sends a request only once its answer is asked for.
      const pending = query({
        sql: "SELECT 1 AS a; SELECT pg_sleep(60), 'busy-pool-kill' AS s; SELECT 3 AS c",
      }).then((answer) => answer);
      // Killed in its sleep, not while being parsed: a statement killed before anything of it
      // ran is sent to another connection (docs/decisions.md 6).
      await eventually(async () => {
        const { rowCount } = await killer.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%busy-pool-kill%' AND pid <> pg_backend_pid()",
        );
        return (rowCount ?? 0) > 0;
      });
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
