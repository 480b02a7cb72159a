/**
 * Sessions and cancel (docs/decisions.md 10.26) against real PostgreSQL: a transaction over several
 * requests, the clocks that end a session, a database restart, the limits, cancel from another
 * request, and SIGTERM. A dedicated cluster, so that it can be restarted and its pg_stat_activity
 * holds only this file's connections. Every answer is checked against the OpenAPI document.
 */
import { eventually, startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import { Client } from 'pg';
import request from 'supertest';
import type { ServerConfig } from '../src/config';
import { Contract, type HttpAnswer } from './openapi/contract';
import { startSqlgateProcess } from './sqlgate-process';
import {
  captureLogs,
  clusterTarget,
  connectObserver as observerOf,
  createTestApp,
  database,
  type TestApp,
} from './support';

const describeWithLocalCluster = database.source === 'local-cluster' ? describe : describe.skip;

const contract = new Contract();
const SESSIONS = '/api/sessions';
const SESSION = '/api/sessions/{sessionId}';
const SESSION_QUERY = '/api/sessions/{sessionId}/query';
const CANCEL = '/api/requests/{requestId}/cancel';

describeWithLocalCluster('sessions and cancel, against real PostgreSQL', () => {
  let cluster: LocalCluster;
  let observer: Client;

  const connection = (overrides: Record<string, unknown> = {}) => clusterTarget(cluster, overrides);
  const connectObserver = () => observerOf(cluster);

  /** What sqlgate's backends are doing now. */
  async function backends(): Promise<{ pid: number; state: string; query: string }[]> {
    const { rows } = await observer.query<{ pid: number; state: string; query: string }>(
      "SELECT pid, state, query FROM pg_stat_activity WHERE application_name = 'sqlgate' AND datname = $1",
      [cluster.database],
    );
    return rows;
  }

  /** The advisory lock statements wait on while the observer holds it (holdUntilReleased). */
  const HOLDING_LOCK = 4646;
  const WAITS_FOR_LOCK = `SELECT 1 AS held FROM pg_advisory_xact_lock_shared(${HOLDING_LOCK})`;

  /**
   * Takes the lock the test's statements wait on; resolves once `count` statements wait for it,
   * with the function that lets them go. Holds connections however slowly the test runs.
   */
  async function holdUntilReleased(start: () => unknown, count = 1): Promise<() => Promise<void>> {
    await observer.query('SELECT pg_advisory_lock($1)', [HOLDING_LOCK]);
    start();
    await eventually(async () => {
      const { rows } = await observer.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE $1",
        [`%pg_advisory_xact_lock_shared(${HOLDING_LOCK})%`],
      );
      return rows[0].n === count;
    });
    return async () => {
      await observer.query('SELECT pg_advisory_unlock($1)', [HOLDING_LOCK]);
    };
  }

  /** The app, and calls of each route whose answers are checked against the document. */
  function client(testApp: TestApp) {
    const documented = (answer: HttpAnswer, path: string, method: string): HttpAnswer => {
      contract.expectDocumented(answer, path, method);
      return answer;
    };
    return {
      async open(fields: Record<string, unknown> = {}): Promise<HttpAnswer> {
        const body = connection(fields);
        return documented(await request(testApp.app).post(SESSIONS).send(body), SESSIONS, 'post');
      },
      async openId(fields: Record<string, unknown> = {}): Promise<string> {
        const answer = await this.open(fields);
        expect(answer.status).toBe(201);
        return (answer.body as { sessionId: string }).sessionId;
      },
      async run(id: string, body: Record<string, unknown>): Promise<HttpAnswer> {
        const answer = await request(testApp.app).post(`${SESSIONS}/${id}/query`).send(body);
        return documented(answer, SESSION_QUERY, 'post');
      },
      async close(id: string): Promise<HttpAnswer> {
        return documented(
          await request(testApp.app).delete(`${SESSIONS}/${id}`),
          SESSION,
          'delete',
        );
      },
      async cancelIn(id: string): Promise<HttpAnswer> {
        const answer = await request(testApp.app).delete(`${SESSIONS}/${id}/query`);
        return documented(answer, SESSION_QUERY, 'delete');
      },
      async query(body: Record<string, unknown>, requestId?: string): Promise<HttpAnswer> {
        const sent = request(testApp.app).post('/api/query');
        if (requestId) sent.set('X-Request-Id', requestId);
        return documented(await sent.send(connection(body)), '/api/query', 'post');
      },
      async cancel(requestId: string, fields: Record<string, unknown> = {}): Promise<HttpAnswer> {
        const answer = await request(testApp.app)
          .post(`/api/requests/${requestId}/cancel`)
          .send({ ...connection(), sslMode: undefined, ...fields });
        return documented(answer, CANCEL, 'post');
      },
    };
  }

  async function withApp<T>(
    config: Partial<ServerConfig>,
    body: (api: ReturnType<typeof client>, testApp: TestApp) => Promise<T>,
    logger?: Parameters<typeof createTestApp>[1],
  ): Promise<T> {
    const testApp = createTestApp(config, logger);
    try {
      return await body(client(testApp), testApp);
    } finally {
      await testApp.close();
    }
  }

  beforeAll(async () => {
    cluster = await startLocalCluster({ tls: false });
    observer = await connectObserver();
    await observer.query('CREATE TABLE accounts (id int PRIMARY KEY, owner text)');
  }, 60_000);
  afterAll(async () => {
    await observer?.end().catch(() => undefined);
    await cluster?.stop();
  });
  beforeEach(() => observer.query('TRUNCATE accounts'));

  it('an interactive transaction over four requests: seen inside, not outside, until COMMIT', async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      const begin = await api.run(id, { sql: 'BEGIN' });
      expect(begin.status).toBe(200);
      expect(begin.body).toMatchObject({
        command: 'BEGIN',
        session: { status: 'open', transactionStatus: 'in-transaction' },
      });
      const insert = await api.run(id, {
        sql: 'INSERT INTO accounts VALUES ($1, $2) RETURNING id',
        params: [1, 'ada'],
      });
      expect(insert.body).toMatchObject({ rows: [{ id: 1 }], rowCount: 1 });

      const inside = await api.run(id, { sql: 'SELECT owner FROM accounts' });
      expect(inside.body).toMatchObject({ rows: [{ owner: 'ada' }] });
      // Another session and a plain request see nothing yet.
      const other = await api.openId();
      expect(
        (await api.run(other, { sql: 'SELECT count(*)::int AS n FROM accounts' })).body,
      ).toMatchObject({
        rows: [{ n: 0 }],
      });
      expect(
        (await api.query({ sql: 'SELECT count(*)::int AS n FROM accounts' })).body,
      ).toMatchObject({
        rows: [{ n: 0 }],
      });

      const commit = await api.run(id, { sql: 'COMMIT' });
      expect(commit.body).toMatchObject({
        command: 'COMMIT',
        session: { status: 'open', transactionStatus: 'idle' },
      });
      expect((await api.run(other, { sql: 'SELECT owner FROM accounts' })).body).toMatchObject({
        rows: [{ owner: 'ada' }],
      });
      expect((await api.close(id)).body).toEqual({ closed: true, rolledBack: false });
      expect((await api.close(other)).body).toEqual({ closed: true, rolledBack: false });
      expect((await api.run(id, { sql: 'SELECT 1' })).status).toBe(404);
    });
  });

  it('a failed statement leaves the transaction failed for the caller to roll back; a script runs as written', async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      const failed = await api.run(id, {
        sql: "BEGIN; INSERT INTO accounts VALUES (1, 'a'); INSERT INTO accounts VALUES (1, 'b'); SELECT 'never'",
      });
      expect(failed.status).toBe(400);
      expect(failed.body).toMatchObject({
        failedStatementIndex: 2,
        transactionUsed: false,
        session: { transactionStatus: 'failed' },
      });
      expect((failed.body as { results: unknown[] }).results).toHaveLength(3);
      const refused = await api.run(id, { sql: 'SELECT 1' });
      expect(refused.body).toMatchObject({ error: { code: '25P02' } });
      const rollback = await api.run(id, { sql: 'ROLLBACK' });
      expect(rollback.body).toMatchObject({ session: { transactionStatus: 'idle' } });
      expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
        { n: 0 },
      ]);
      await api.close(id);
    });
  });

  it('a session idle past its timeout is rolled back, and its connection is clean for the next user', async () => {
    await withApp({ poolMax: 2 }, async (api, testApp) => {
      const id = await api.openId({ idleTimeoutMs: 400 });
      await api.run(id, {
        sql: "BEGIN; INSERT INTO accounts VALUES (7, 'left'); SET search_path = nowhere; CREATE TEMP TABLE scratch (x int)",
      });
      // The pool's other connection, when it has one, is idle: the write's cache invalidation
      // asked the server on it which database it is (docs/decisions.md 10.20).
      expect((await backends()).filter((backend) => backend.state !== 'idle')).toEqual([
        expect.objectContaining({ state: 'idle in transaction' }),
      ]);
      // Watched without a request to the session, which would start its clock again.
      await eventually(() => testApp.service.sessionStatistics().ended.idle === 1);
      expect((await api.run(id, { sql: 'SELECT 1' })).status).toBe(404);
      await eventually(async () =>
        expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
          { n: 0 },
        ]),
      );
      expect(testApp.service.sessionStatistics()).toMatchObject({ open: 0, ended: { idle: 1 } });
      // Both pooled connections (the session's among them) answer with the defaults: the checks
      // wait for each other, so that each has a connection of its own.
      let answers: Promise<HttpAnswer[]> | undefined;
      const release = await holdUntilReleased(
        () =>
          (answers = Promise.all(
            [1, 2].map(() =>
              api.query({
                sql: `SELECT current_setting('search_path') AS path, to_regclass('pg_temp.scratch') IS NULL AS clean FROM pg_advisory_xact_lock_shared(${HOLDING_LOCK})`,
              }),
            ),
          )),
        2,
      );
      await release();
      const checks = (await answers) ?? [];
      expect(checks).toHaveLength(2);
      for (const check of checks) {
        expect(check.body).toMatchObject({ rows: [{ path: '"$user", public', clean: true }] });
      }
      expect((await backends()).map((backend) => backend.state)).toEqual(['idle', 'idle']);
    });
  });

  it('a session ends at SESSION_MAX_LIFETIME_MS even while it is used', async () => {
    // Long enough for the first request to come in time on a loaded machine.
    await withApp({ sessionMaxLifetimeMs: 3000 }, async (api) => {
      const id = await api.openId();
      const statuses: number[] = [];
      await eventually(
        async () => {
          statuses.push((await api.run(id, { sql: 'SELECT 1' })).status);
          return statuses.at(-1) === 404;
        },
        { withinMs: 30_000, everyMs: 50 },
      );
      expect(statuses[0]).toBe(200);
    });
  }, 60_000);

  it('a database restart mid-session answers a clear error and frees the session', async () => {
    await withApp({ poolMax: 3 }, async (api, testApp) => {
      const id = await api.openId();
      await api.run(id, { sql: "BEGIN; INSERT INTO accounts VALUES (9, 'lost')" });
      await observer.end();
      await cluster.restart();
      observer = await connectObserver();

      // The session ended when its connection did (or, if the request came first, with it).
      const lost = await api.run(id, { sql: 'SELECT owner FROM accounts' });
      expect([404, 502]).toContain(lost.status);
      expect(lost.body).toMatchObject({
        error:
          lost.status === 404
            ? expect.stringContaining('connection to the database was lost')
            : { message: expect.any(String) },
        session: { status: 'closed', reason: 'broken' },
      });
      expect(testApp.service.sessionStatistics()).toMatchObject({ open: 0, ended: { broken: 1 } });
      expect((await api.run(id, { sql: 'SELECT 1' })).status).toBe(404);
      const pools = testApp.service.poolStats();
      expect(pools.reduce((sum, pool) => sum + pool.activeConnections, 0)).toBe(0);
      // The insert died with the server's transaction; a new session works at once.
      expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
        { n: 0 },
      ]);
      const again = await api.openId();
      expect((await api.run(again, { sql: 'SELECT 1 AS ok' })).body).toMatchObject({
        rows: [{ ok: 1 }],
      });
      await api.close(again);
    });
  }, 30_000);

  it('limits: MAX_SESSIONS and POOL_MAX - 1 per pool answer 503 with Retry-After; requests still run', async () => {
    await withApp({ poolMax: 3, maxSessions: 3 }, async (api, testApp) => {
      const first = await api.openId();
      const second = await api.openId();
      const third = await api.open();
      expect(third.status).toBe(503);
      expect(third.headers['retry-after']).toBe('1');
      expect(third.body).toEqual({
        error: expect.stringContaining('POOL_MAX - 1'),
        code: 'SESSION_LIMIT',
      });
      // The pool keeps one connection for everything else.
      expect((await api.query({ sql: 'SELECT 1 AS ok' })).body).toMatchObject({
        rows: [{ ok: 1 }],
      });
      // Sessions count as active connections of their pool.
      expect(testApp.service.poolStats()).toEqual([
        expect.objectContaining({ activeConnections: 2 }),
      ]);
      const elsewhere = await api.openId({ database: 'postgres' });
      const fourth = await api.open({ database: 'template1' });
      expect(fourth.status).toBe(503);
      expect(fourth.body).toEqual({
        error: expect.stringContaining('MAX_SESSIONS'),
        code: 'SESSION_LIMIT',
      });
      for (const id of [first, second, elsewhere]) await api.close(id);
      expect((await api.open()).status).toBe(201);
    });
  });

  it('one request at a time per session: a second one meanwhile answers 409', async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      let slow: Promise<HttpAnswer> | undefined;
      const release = await holdUntilReleased(() => (slow = api.run(id, { sql: WAITS_FOR_LOCK })));
      const busy = await api.run(id, { sql: 'SELECT 1' });
      await release();
      expect(busy.status).toBe(409);
      expect(busy.body).toEqual({
        error: expect.stringContaining('one request at a time'),
        code: 'SESSION_BUSY',
        session: expect.objectContaining({ status: 'open' }),
      });
      expect((await slow)?.status).toBe(200);
      await api.close(id);
    });
  });

  it('cancel from a second request stops pg_sleep(30); another login cancels nothing', async () => {
    await withApp({}, async (api) => {
      const running = api.query({ sql: 'SELECT pg_sleep(30)' }, 'sleeper-1');
      await eventually(async () =>
        (await backends()).some((b) => b.state === 'active' && b.query.includes('pg_sleep')),
      );

      // Another password (trust auth would let it in, sqlgate does not), another user, another
      // database: answered as an id that runs nothing (10.34), and the statement keeps running.
      const nothing = await api.cancel('no-such-request');
      expect(nothing.status).toBe(404);
      expect(nothing.body).toEqual({ error: expect.any(String), code: 'REQUEST_NOT_FOUND' });
      for (const other of [{ password: 'guess' }, { user: 'postgres' }, { database: 'postgres' }]) {
        const refused = await api.cancel('sleeper-1', other);
        expect([refused.status, refused.body]).toEqual([nothing.status, nothing.body]);
      }
      expect((await backends()).some((b) => b.state === 'active')).toBe(true);

      const cancel = await api.cancel('sleeper-1');
      expect(cancel.status).toBe(200);
      expect(cancel.body).toEqual({ cancelled: true });
      // 57014: the sleep was cancelled, not waited out.
      const answer = await running;
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({ error: { code: '57014' } });
      await eventually(async () => (await backends()).every((b) => b.state === 'idle'));
      expect((await api.cancel('sleeper-1')).status).toBe(404);
    });
  });

  it('DELETE /api/sessions/{id}/query stops what runs in the session, which stays open', async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      await api.run(id, { sql: 'BEGIN' });
      const running = api.run(id, { sql: 'SELECT pg_sleep(30)' });
      await eventually(async () => (await backends()).some((b) => b.state === 'active'));
      expect((await api.cancelIn(id)).body).toEqual({ cancelled: true });
      // Answered long before the 30 s sleep's end, and so cancelled.
      const answer = await running;
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({
        session: { status: 'open', transactionStatus: 'failed' },
      });
      expect((await api.cancelIn(id)).status).toBe(404);
      expect((await api.run(id, { sql: 'ROLLBACK' })).status).toBe(200);
      // Cancelled by its own session id: the request was also cancellable by its request id.
      expect((await api.close(id)).body).toEqual({ closed: true, rolledBack: false });
    });
  });

  it('closing a session while it runs cancels the statement and rolls back', async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      const running = api.run(id, {
        sql: "BEGIN; INSERT INTO accounts VALUES (3, 'x'); SELECT pg_sleep(30)",
      });
      await eventually(async () => (await backends()).some((b) => b.state === 'active'));
      const closed = await api.close(id);
      expect(closed.body).toEqual({ closed: true, rolledBack: true });
      expect((await running).body).toMatchObject({ session: { status: 'closed' } });
      expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
        { n: 0 },
      ]);
    });
  });

  it('a backend that ignores the cancel: closing the session closes its connection after 5 s, rolled back', async () => {
    await withApp({}, async (api, testApp) => {
      const id = await api.openId();
      await api.run(id, { sql: "BEGIN; INSERT INTO accounts VALUES (4, 'frozen')" });
      const running = api.run(id, { sql: 'SELECT pg_sleep(30)' });
      await eventually(async () => (await backends()).some((b) => b.state === 'active'));
      const [backend] = await backends();
      // A frozen backend: the cancel's signal waits, unhandled, until it is thawed. Only closing
      // its connection can end the session.
      process.kill(backend?.pid as number, 'SIGSTOP');
      try {
        const closed = await api.close(id);
        expect(closed.body).toEqual({ closed: true, rolledBack: true });
        const answer = await running;
        expect(answer.status).toBe(409);
        expect(answer.body).toMatchObject({
          error: { message: expect.stringContaining('did not stop the statement') },
          cancelled: true,
          session: { status: 'closed', reason: 'closed' },
        });
      } finally {
        process.kill(backend?.pid as number, 'SIGCONT');
      }
      expect(testApp.service.sessionStatistics()).toMatchObject({ open: 0, ended: { closed: 1 } });
      expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
        { n: 0 },
      ]);
      expect((await api.query({ sql: 'SELECT 1 AS ok' })).body).toMatchObject({
        rows: [{ ok: 1 }],
      });
    });
  }, 60_000);

  it('a backend terminated while its session is idle ends the session at once', async () => {
    await withApp({}, async (api, testApp) => {
      const id = await api.openId();
      await api.run(id, { sql: 'BEGIN' });
      const [backend] = await backends();
      await observer.query('SELECT pg_terminate_backend($1)', [backend?.pid]);
      await eventually(() => testApp.service.sessionStatistics().open === 0);
      expect(testApp.service.sessionStatistics().ended.broken).toBe(1);
      expect((await api.run(id, { sql: 'SELECT 1' })).status).toBe(404);
      expect(
        testApp.service.poolStats().reduce((sum, pool) => sum + pool.activeConnections, 0),
      ).toBe(0);
    });
  });

  it('a request cancelled while it waits for a pooled connection answers at once', async () => {
    await withApp({ poolMax: 2 }, async (api, testApp) => {
      const session = await api.openId();
      let holding: Promise<HttpAnswer> | undefined;
      const release = await holdUntilReleased(() => (holding = api.query({ sql: WAITS_FOR_LOCK })));
      const waitingForPool = () =>
        testApp.service.poolStats().reduce((sum, pool) => sum + pool.waitingClients, 0);
      const waiting = api.query({ sql: "INSERT INTO accounts VALUES (40, 'never')" }, 'waiter-1');
      await eventually(() => waitingForPool() === 1);
      expect((await api.cancel('waiter-1')).status).toBe(200);
      // Answered while both connections are still held: it did not wait for one.
      const answer = await waiting;
      await release();
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({ cancelled: true });
      expect((await holding)?.status).toBe(200);
      // The connection that came free later went back unused: nothing was inserted.
      expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
        { n: 0 },
      ]);
      expect((await api.query({ sql: 'SELECT 1 AS ok' })).body).toMatchObject({
        rows: [{ ok: 1 }],
      });

      // Opening a session waits for a connection the same way, and is cancelled the same way: both
      // connections of the pool are held meanwhile.
      await api.close(session);
      let holdingAgain: Promise<HttpAnswer[]> | undefined;
      const releaseAgain = await holdUntilReleased(
        () => (holdingAgain = Promise.all([1, 2].map(() => api.query({ sql: WAITS_FOR_LOCK })))),
        2,
      );
      // supertest sends a request once it is awaited or then'd.
      const opening = request(testApp.app)
        .post(SESSIONS)
        .set('X-Request-Id', 'opener-1')
        .send(connection())
        .then((answer) => answer);
      await eventually(() => waitingForPool() === 1);
      expect((await api.cancel('opener-1')).status).toBe(200);
      const refused = await opening;
      await releaseAgain();
      contract.expectDocumented(refused, SESSIONS, 'post');
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'REQUEST_CANCELLED' });
      await holdingAgain;
      expect(testApp.service.sessionStatistics()).toMatchObject({ open: 0, opened: 1 });
    });
  });

  it("reads a session's SQL with its own standard_conforming_strings", async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      await api.run(id, { sql: 'SET standard_conforming_strings = off' });
      // With the setting off, the backslash escapes the quote: one statement, one string.
      const read = await api.run(id, { sql: "SELECT 'a\\'; SELECT 2' AS v" });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({ rows: [{ v: "a'; SELECT 2" }] });
      await api.run(id, { sql: 'RESET standard_conforming_strings' });
      const split = await api.run(id, { sql: "SELECT 'a\\' AS v; SELECT 2 AS w" });
      expect(split.body).toMatchObject({
        results: [{ rows: [{ v: 'a\\' }] }, { rows: [{ w: 2 }] }],
      });
      await api.close(id);
    });
  });

  it("timeoutMs cancels a slow statement and leaves the session's own statement_timeout alone", async () => {
    await withApp({}, async (api) => {
      const id = await api.openId();
      const slow = await api.run(id, { sql: 'SELECT pg_sleep(5)', timeoutMs: 200 });
      expect(slow.status).toBe(504);
      expect(slow.body).toMatchObject({ error: { code: '57014' }, session: { status: 'open' } });
      expect((await api.run(id, { sql: 'SHOW statement_timeout' })).body).toMatchObject({
        rows: [{ statement_timeout: '0' }],
      });
      await api.close(id);
    });
  });

  it('a write committed in a session invalidates cached reads once COMMIT is answered', async () => {
    await withApp({}, async (api) => {
      const read = { sql: 'SELECT count(*)::int AS n FROM accounts', cache: true };
      expect((await api.query(read)).body).toMatchObject({ rows: [{ n: 0 }] });
      expect((await api.query(read)).body).toMatchObject({ rows: [{ n: 0 }], cached: true });
      const id = await api.openId();
      await api.run(id, { sql: "BEGIN; INSERT INTO accounts VALUES (5, 'c')" });
      await api.run(id, { sql: 'COMMIT' });
      expect((await api.query(read)).body).toMatchObject({ rows: [{ n: 1 }] });
      // Autocommit writes in a session invalidate at once too.
      await api.query(read);
      await api.run(id, { sql: "INSERT INTO accounts VALUES (6, 'd')" });
      expect((await api.query(read)).body).toMatchObject({ rows: [{ n: 2 }] });
      // A write that committed before the request opened a new transaction...
      await api.query(read);
      await api.run(id, { sql: "INSERT INTO accounts VALUES (7, 'e'); BEGIN" });
      expect((await api.query(read)).body).toMatchObject({ rows: [{ n: 3 }] });
      // ...and one committed by a request that begins the next transaction.
      await api.run(id, { sql: "INSERT INTO accounts VALUES (8, 'f')" });
      await api.query(read);
      await api.run(id, { sql: 'COMMIT; BEGIN' });
      expect((await api.query(read)).body).toMatchObject({ rows: [{ n: 4 }] });
      await api.close(id);
    });
  });

  it('/metrics counts sessions open, opened and ended by reason', async () => {
    await withApp({}, async (api, testApp) => {
      const closed = await api.openId();
      await api.openId({ idleTimeoutMs: 100 });
      const open = await api.openId();
      await api.close(closed);
      await eventually(() => testApp.service.sessionStatistics().ended.idle === 1);
      const scrape = await request(testApp.app).get('/metrics');
      const value = (series: string) =>
        Number(
          new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(scrape.text)?.[1],
        );
      expect(value('sqlgate_sessions_open')).toBe(1);
      expect(value('sqlgate_sessions_opened_total')).toBe(3);
      expect(value('sqlgate_sessions_ended_total{reason="closed"}')).toBe(1);
      expect(value('sqlgate_sessions_ended_total{reason="idle"}')).toBe(1);
      expect(value('sqlgate_sessions_ended_total{reason="broken"}')).toBe(0);
      await api.close(open);
    });
  });

  it('session ids are 128-bit, distinct, and never logged whole', async () => {
    const { logger, lines } = captureLogs('info');
    await withApp(
      {},
      async (api, testApp) => {
        const ids = await Promise.all([1, 2, 3].map(() => api.openId()));
        expect(new Set(ids).size).toBe(3);
        for (const id of ids) {
          expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
          await api.run(id, { sql: 'SELECT 1' });
          await api.close(id);
        }
        // A careless base URL ending in a slash: answered 404, logged without the whole id.
        await request(testApp.app).post(`/${SESSIONS}/${ids[0]}/query`).send({ sql: 'SELECT 1' });
        const logged = JSON.stringify(lines());
        expect(lines().length).toBeGreaterThanOrEqual(10);
        for (const id of ids) {
          expect(logged).not.toContain(id);
          expect(logged).toContain(`/api/sessions/${id.slice(0, 6)}…`);
        }
      },
      logger,
    );
  });

  it('SIGTERM rolls back every open session and exits', async () => {
    const sqlgate = await startSqlgateProcess({});
    try {
      const ids: string[] = [];
      for (const account of [11, 12]) {
        const opened = await sqlgate.post(SESSIONS, connection(), 5000);
        expect(opened).toMatchObject({ kind: 'response', status: 201 });
        const id = (opened as { body: { sessionId: string } }).body.sessionId;
        const inserted = await sqlgate.post(
          `${SESSIONS}/${id}/query`,
          { sql: `BEGIN; INSERT INTO accounts VALUES (${account}, 'pending')` },
          5000,
        );
        expect(inserted).toMatchObject({ kind: 'response', status: 200 });
        ids.push(id);
      }
      // One of them is running a long statement when the signal comes: it is cancelled and answered.
      const running = sqlgate.post(
        `${SESSIONS}/${ids[1]}/query`,
        { sql: 'SELECT pg_sleep(30)' },
        15_000,
      );
      await eventually(async () => (await backends()).some((b) => b.state === 'active'));
      const signalledAt = Date.now();
      process.kill(sqlgate.pid, 'SIGTERM');
      expect(await running).toMatchObject({
        kind: 'response',
        status: 409,
        body: { cancelled: true, session: { status: 'closed', reason: 'shutdown' } },
      });
      await sqlgate.settle(10_000);
      expect(sqlgate.exit()).toBe('exited with code 0');
      // Nothing waits for the 10 s grace period: the sessions end at once, and nothing else runs.
      // (A wide margin below it for a loaded machine.)
      expect(Date.now() - signalledAt).toBeLessThan(9000);
      expect((await observer.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([
        { n: 0 },
      ]);
      await eventually(async () => (await backends()).length === 0);
    } finally {
      await sqlgate.stop();
    }
  }, 30_000);
});
