/**
 * Faults between sqlgate and PostgreSQL (docs/decisions.md 5 and 6): what the caller sees, and
 * that the service keeps working afterwards. A dedicated cluster is used so that it can be restarted
 * and so that its pg_stat_activity holds only the connections of this file. The tests wait for what
 * PostgreSQL shows (a statement running, a backend gone) rather than for fixed times.
 */
import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { eventually, startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import { Client } from 'pg';
import { createApp } from '../src/app';
import {
  clusterTarget as targetOfCluster,
  connectObserver as observerOf,
  createTestApp,
  database,
  target,
  type TestApp,
  refusingPort,
} from './support';

const describeWithLocalCluster = database.source === 'local-cluster' ? describe : describe.skip;

/** The app behind a real HTTP server, as a caller reaches it. */
interface RunningApp {
  url: string;
  post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  pools(): Promise<Record<string, number | string>[]>;
  close(): Promise<void>;
}

async function serve(testApp: TestApp): Promise<RunningApp> {
  const server: Server = createHttpServer(createApp({ service: testApp.service }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async post(path, body) {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async pools() {
      const response = await fetch(`${url}/api/stats/pools`);
      return ((await response.json()) as { stats: Record<string, number | string>[] }).stats;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await testApp.close();
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('targets that cannot be reached', () => {
  let testApp: TestApp;
  beforeAll(() => {
    testApp = createTestApp({ connectTimeoutMs: 300 });
  });
  afterAll(() => testApp.close());

  it('nothing listens on the target port: 502 ECONNREFUSED at once, not at the connect timeout', async () => {
    // A connect timeout past the test's own: only the refusal itself can answer in time.
    const running = await serve(createTestApp({ connectTimeoutMs: 600_000 }));
    try {
      const response = await running.post(
        '/api/query',
        target({ host: '127.0.0.1', port: await refusingPort(), sql: 'SELECT 1' }),
      );
      expect(response.status).toBe(502);
      expect(response.body).toEqual({
        error: { message: expect.any(String), code: 'ECONNREFUSED' },
      });
    } finally {
      await running.close();
    }
  }, 30_000);

  it('a server that accepts and never answers: 504 ETIMEDOUT at CONNECT_TIMEOUT_MS, not before', async () => {
    const held = new Set<Socket>();
    const silent = createTcpServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
      // Read (and ignore) what the client sends, so that its closing is seen.
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const running = await serve(testApp);
    try {
      const port = (silent.address() as AddressInfo).port;
      const started = Date.now();
      const response = await running.post(
        '/api/query',
        target({ host: '127.0.0.1', port, sql: 'SELECT 1' }),
      );
      // The server never answers: only CONNECT_TIMEOUT_MS can end the attempt, and not before it.
      expect(response.status).toBe(504);
      expect(response.body).toEqual({ error: { message: expect.any(String), code: 'ETIMEDOUT' } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      // The timed-out socket was closed, not left hanging.
      await eventually(() => held.size > 0 && [...held].every((socket) => socket.closed));
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await running.close();
    }
  });
});

describeWithLocalCluster('faults of a running database', () => {
  let cluster: LocalCluster;
  /** A direct connection to the dedicated cluster, for setup and for watching what the service does. */
  let observer: Client;

  const clusterTarget = (overrides: Record<string, unknown> = {}) =>
    targetOfCluster(cluster, overrides);
  const connectObserver = () => observerOf(cluster);

  async function serviceBackends(user = cluster.user): Promise<number[]> {
    const { rows } = await observer.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'sqlgate' AND usename = $1 AND datname = $2",
      [user, cluster.database],
    );
    return rows.map((row) => row.pid);
  }

  /** The advisory lock a barrier's statements wait on while the observer holds it. */
  const BARRIER_LOCK = 4242;
  const waitsAtBarrier = (i: number | string = 1) =>
    `SELECT ${i} AS ok FROM pg_advisory_xact_lock_shared(${BARRIER_LOCK})`;

  /** Statements of the service that wait for the barrier's lock. */
  async function atBarrier(): Promise<number> {
    const { rows } = await observer.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'sqlgate' AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Has the service run `count` statements at once, so that it holds `count` connections however
   * slowly the requests arrive: each waits on a lock the observer holds until all of them wait.
   */
  async function occupyConnections(running: RunningApp, count: number): Promise<void> {
    await observer.query('SELECT pg_advisory_lock($1)', [BARRIER_LOCK]);
    const answers = Promise.all(
      Array.from({ length: count }, () =>
        running.post('/api/query', clusterTarget({ sql: waitsAtBarrier() })),
      ),
    );
    try {
      await eventually(async () => (await atBarrier()) === count);
    } finally {
      await observer.query('SELECT pg_advisory_unlock($1)', [BARRIER_LOCK]);
    }
    expect((await answers).map((response) => response.status)).toEqual(
      Array.from({ length: count }, () => 200),
    );
  }

  beforeAll(async () => {
    cluster = await startLocalCluster({ tls: false });
    observer = await connectObserver();
  }, 60_000);
  afterAll(async () => {
    await observer?.end().catch(() => undefined);
    await cluster?.stop();
  });

  it('the database restarts between two requests: the first request after the restart succeeds', async () => {
    const running = await serve(createTestApp({ poolMax: 4 }));
    try {
      // Several idle clients, all of which the restart kills.
      await occupyConnections(running, 4);
      await eventually(async () =>
        expect((await running.pools())[0]).toMatchObject({
          totalConnections: 4,
          idleConnections: 4,
        }),
      );

      await observer.end();
      await cluster.restart();
      observer = await connectObserver();

      const first = await running.post('/api/query', clusterTarget({ sql: 'SELECT 1 AS ok' }));
      expect(first).toMatchObject({ status: 200, body: { rows: [{ ok: 1 }] } });
      const all = await Promise.all(
        Array.from({ length: 8 }, () =>
          running.post('/api/query', clusterTarget({ sql: 'SELECT 2 AS ok' })),
        ),
      );
      expect(all.map((response) => response.status)).toEqual(Array.from({ length: 8 }, () => 200));
    } finally {
      await running.close();
    }
  });

  it('idle backends killed with pg_terminate_backend: no crash, and the very next requests succeed', async () => {
    const running = await serve(createTestApp({ poolMax: 3 }));
    try {
      for (let round = 0; round < 5; round++) {
        await occupyConnections(running, 3);
        const pids = await serviceBackends();
        expect(pids).toHaveLength(3);
        await observer.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [
          pids,
        ]);
        // No pause: the requests may get a client whose termination has not been noticed yet.
        const next = await Promise.all(
          Array.from({ length: 3 }, () =>
            running.post('/api/query', clusterTarget({ sql: 'SELECT 3 AS ok' })),
          ),
        );
        expect(next.map((response) => response.status)).toEqual([200, 200, 200]);
      }
    } finally {
      await running.close();
    }
  });

  // A kill that missed would still fail the status check, after the 60 s pg_sleep.
  it('a backend killed while it runs a statement: 502 57P01, no crash, and the next request succeeds', async () => {
    const running = await serve(createTestApp());
    try {
      // Comments are removed before a statement is sent: the probe is found by a literal. A
      // backend shows the statement as active from its Parse on; killed before it answered that,
      // nothing ran and the statement rightly goes to another connection (docs/decisions.md 6).
      // Only the PgSleep wait proves it is running.
      const slow = running.post(
        '/api/query',
        clusterTarget({ sql: "SELECT pg_sleep(60), 'terminate-probe'" }),
      );
      await eventually(async () => {
        const { rows } = await observer.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'SELECT pg_sleep(60), ''terminate-probe''%'",
        );
        return rows.length > 0;
      });
      const response = await slow;
      expect(response.status).toBe(502);
      expect((response.body.error as { code: string }).code).toBe('57P01');
      const next = await running.post('/api/query', clusterTarget({ sql: 'SELECT 4 AS ok' }));
      expect(next).toMatchObject({ status: 200, body: { rows: [{ ok: 4 }] } });
    } finally {
      await running.close();
    }
  }, 90_000);

  it('the HTTP client disconnects mid-query: the statement is cancelled in the database', async () => {
    const running = await serve(createTestApp());
    try {
      // Comments are removed before a statement is sent: the probe is found by a literal.
      const probe = (condition: string) =>
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${condition} AND query LIKE 'SELECT pg_sleep(120), ''disconnect-probe''%'`;
      const body = JSON.stringify(
        clusterTarget({ sql: "SELECT pg_sleep(120), 'disconnect-probe'" }),
      );
      const outgoing = httpRequest(`${running.url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      outgoing.on('error', () => undefined);
      outgoing.end(body);
      // Running, not only parsed: a cancel that came before would have nothing to stop yet.
      await eventually(
        async () => (await observer.query(probe("wait_event = 'PgSleep'"))).rows[0].n === 1,
      );
      outgoing.destroy();
      // Gone long before its two minutes: it was cancelled.
      await eventually(
        async () => (await observer.query(probe("state = 'active'"))).rows[0].n === 0,
        {
          withinMs: 60_000,
        },
      );
      // The connection went back to the pool in working order.
      const next = await running.post('/api/query', clusterTarget({ sql: 'SELECT 5 AS ok' }));
      expect(next).toMatchObject({ status: 200, body: { rows: [{ ok: 5 }] } });
    } finally {
      await running.close();
    }
  }, 90_000);

  it('POOL_IDLE_TIMEOUT_MS and POOL_TARGETS_MAX from the configuration govern the pools', async () => {
    const users = ['limit_probe_a', 'limit_probe_b', 'limit_probe_c'];
    for (const user of users)
      await observer.query(`CREATE ROLE ${user} LOGIN PASSWORD 'limit-probe'`);
    const running = await serve(createTestApp({ poolIdleTimeoutMs: 100, poolTargetsMax: 2 }));
    try {
      for (const user of users) {
        const response = await running.post(
          '/api/query',
          clusterTarget({ user, password: 'limit-probe', sql: 'SELECT 1' }),
        );
        expect(response.status).toBe(200);
        expect((await running.pools()).length).toBeLessThanOrEqual(2);
      }
      const ids = (await running.pools()).map((stat) => stat.poolId);
      expect(ids).toEqual([
        `${cluster.host}:${cluster.port}:limit_probe_b:${cluster.database}`,
        `${cluster.host}:${cluster.port}:limit_probe_c:${cluster.database}`,
      ]);
      // Idle clients close after POOL_IDLE_TIMEOUT_MS; the pools stay listed, empty.
      await eventually(async () =>
        (await running.pools()).every((stat) => stat.totalConnections === 0),
      );
    } finally {
      await running.close();
    }
  });

  it('100 concurrent requests to one target: never more than POOL_MAX connections, all complete, callers wait', async () => {
    const POOL_MAX = 10;
    // A user of its own: connections left by earlier tests cannot be counted.
    const user = 'concurrency_probe';
    const password = 'concurrency-probe-password';
    await observer.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
    // The wait for a connection is not what this test bounds.
    const running = await serve(createTestApp({ poolMax: POOL_MAX, poolWaitTimeoutMs: 600_000 }));
    try {
      let finished = false;
      let mostConnections = 0;
      const sampleConnections = (async () => {
        while (!finished) {
          mostConnections = Math.max(mostConnections, (await serviceBackends(user)).length);
          await sleep(10);
        }
      })();
      const waitingClients = async () =>
        (await running.pools()).reduce((sum, stat) => sum + Number(stat.waitingClients), 0);
      // Every statement waits at the barrier: POOL_MAX of them hold the connections, the others
      // wait for one, however slowly the requests arrive.
      await observer.query('SELECT pg_advisory_lock($1)', [BARRIER_LOCK]);
      const answers = Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          running.post('/api/query', clusterTarget({ user, password, sql: waitsAtBarrier(i) })),
        ),
      );
      try {
        await eventually(async () =>
          expect({ running: await atBarrier(), waiting: await waitingClients() }).toEqual({
            running: POOL_MAX,
            waiting: 100 - POOL_MAX,
          }),
        );
      } finally {
        await observer.query('SELECT pg_advisory_unlock($1)', [BARRIER_LOCK]);
      }
      const responses = await answers;
      finished = true;
      await sampleConnections;
      expect(responses.map((response) => response.status)).toEqual(
        Array.from({ length: 100 }, () => 200),
      );
      expect(responses.map((response) => (response.body.rows as { ok: number }[])[0]?.ok)).toEqual(
        Array.from({ length: 100 }, (_, i) => i),
      );
      expect(mostConnections).toBeGreaterThan(0);
      expect(mostConnections).toBeLessThanOrEqual(POOL_MAX);
    } finally {
      await running.close();
    }
  }, 60_000);
});
