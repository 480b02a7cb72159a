/**
 * Sessions and cancels with WORKERS=2 (docs/decisions.md 10.35): the built bin against a throwaway
 * cluster, every request on a connection of its own, so that the kernel spreads them over both
 * workers. Whichever worker a request reaches, it finds its session or the request it cancels;
 * the tests check what each request answers, never which worker answered it.
 */
import { request, type ClientRequest } from 'node:http';
import { eventually, startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import type { Client } from 'pg';
import { rawRequest } from './raw-http';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { clusterTarget, connectObserver } from './support';
import { childrenOf } from './worker-processes';

let cluster: LocalCluster;
let observer: Client;
let server: SqlgateProcess;
/** Worker pids seen, killed at the end so that none outlives the file. */
const seenWorkers = new Set<number>();

beforeAll(async () => {
  cluster = await startLocalCluster({ tls: false });
  observer = await connectObserver(cluster);
  await observer.query('CREATE TABLE ledger (id int PRIMARY KEY, note text)');
  server = await startSqlgateProcess({ WORKERS: '2' });
  for (const pid of childrenOf(server.pid)) seenWorkers.add(pid);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  for (const pid of seenWorkers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await observer?.end().catch(() => undefined);
  await cluster?.stop();
});

afterEach(() => {
  if (!server.alive()) throw new Error(`the primary ended:\n${server.output()}`);
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request on a connection of its own (no keep-alive). */
async function fresh(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await rawRequest({
    port: Number(new URL(server.url).port),
    method,
    path,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: response.json() as Record<string, unknown> };
}

/** A request left running on a connection of its own; `abort` makes its caller go away. */
function running(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): { answer: Promise<Answer | 'no answer'>; abort(): void } {
  let outgoing: ClientRequest | undefined;
  const answer = new Promise<Answer | 'no answer'>((resolve) => {
    outgoing = request(`${server.url}${path}`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...headers },
    });
    outgoing.on('response', (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (text += chunk));
      incoming.on('end', () =>
        resolve({
          status: incoming.statusCode ?? 0,
          body: JSON.parse(text) as Record<string, unknown>,
        }),
      );
    });
    outgoing.on('error', () => resolve('no answer'));
    outgoing.end(JSON.stringify(body));
  });
  return { answer, abort: () => outgoing?.destroy() };
}

/** Whether sqlgate's backend runs a statement holding `marker` now. */
async function statementRuns(marker: string): Promise<boolean> {
  const { rows } = await observer.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'sqlgate' AND state = 'active' AND query LIKE $1",
    [`%${marker}%`],
  );
  return rows[0]?.n === 1;
}

const ROUNDS = 6;

describe('WORKERS=2: sessions and cancels whichever worker a request reaches', () => {
  it("the README's session walkthrough, every request on a new connection", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const opened = await fresh('POST', '/api/sessions', clusterTarget(cluster));
      expect(opened.status).toBe(201);
      const session = `/api/sessions/${opened.body.sessionId as string}`;
      const run = (sql: string) => fresh('POST', `${session}/query`, { sql });

      const began = await run(
        `BEGIN; SET LOCAL application_name = 'walk-${round}'; CREATE TEMP TABLE scratch (v int); INSERT INTO scratch VALUES (${round}); INSERT INTO ledger VALUES (${round}, 'walk')`,
      );
      expect(began).toMatchObject({
        status: 200,
        body: { session: { status: 'open', transactionStatus: 'in-transaction' } },
      });
      // The session's setting, temporary table and uncommitted row, seen by its next requests.
      for (let look = 0; look < 3; look++) {
        const seen = await run(
          "SELECT current_setting('application_name') AS name, (SELECT v FROM scratch) AS v, (SELECT count(*)::int FROM ledger) AS rows",
        );
        expect(seen).toMatchObject({
          status: 200,
          body: { rows: [{ name: `walk-${round}`, v: round, rows: round + 1 }] },
        });
      }
      expect(await run('COMMIT')).toMatchObject({
        status: 200,
        body: { session: { status: 'open', transactionStatus: 'idle' } },
      });
      expect(await fresh('DELETE', session)).toEqual({
        status: 200,
        body: { closed: true, rolledBack: false },
      });
      // Closed, wherever asked: and it says why.
      for (let ask = 0; ask < 2; ask++) {
        expect(await run('SELECT 1')).toMatchObject({
          status: 404,
          body: { code: 'SESSION_NOT_FOUND', session: { status: 'closed', reason: 'closed' } },
        });
      }
    }
    const { rows } = await observer.query('SELECT count(*)::int AS n FROM ledger');
    expect(rows[0]?.n).toBe(ROUNDS);
  }, 120_000);

  it('DELETE /api/sessions/{id}/query stops what runs in the session; a caller that leaves stops it too', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const opened = await fresh('POST', '/api/sessions', clusterTarget(cluster));
      const session = `/api/sessions/${opened.body.sessionId as string}`;
      const marker = `session_sleep_${round}`;

      const sleeping = running(`${session}/query`, { sql: `SELECT pg_sleep(30) AS ${marker}` });
      await eventually(() => statementRuns(marker), { withinMs: 10_000 });
      expect(await fresh('DELETE', `${session}/query`)).toEqual({
        status: 200,
        body: { cancelled: true },
      });
      expect(await sleeping.answer).toMatchObject({
        status: 409,
        body: { cancelled: true, session: { status: 'open' } },
      });

      const leaving = running(`${session}/query`, { sql: `SELECT pg_sleep(30) AS ${marker}_left` });
      await eventually(() => statementRuns(`${marker}_left`), { withinMs: 10_000 });
      leaving.abort();
      await eventually(async () => !(await statementRuns(`${marker}_left`)), { withinMs: 5_000 });
      expect(await fresh('DELETE', session)).toMatchObject({ status: 200 });
    }
  }, 120_000);

  it('a cancel by request id reaches the request in either worker; a wrong login cancels nothing', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const marker = `cancel_me_${round}`;
      const requestId = `workers-cancel-${round}`;
      const sleeping = running(
        '/api/query',
        { ...clusterTarget(cluster), sql: `SELECT pg_sleep(30) AS ${marker}` },
        { 'x-request-id': requestId },
      );
      await eventually(() => statementRuns(marker), { withinMs: 10_000 });
      const { sslMode: _sslMode, ...login } = clusterTarget(cluster);
      const wrong = await fresh('POST', `/api/requests/${requestId}/cancel`, {
        ...login,
        password: 'wrong',
      });
      expect(wrong).toMatchObject({ status: 404, body: { code: 'REQUEST_NOT_FOUND' } });
      expect(await statementRuns(marker)).toBe(true);
      expect(await fresh('POST', `/api/requests/${requestId}/cancel`, login)).toEqual({
        status: 200,
        body: { cancelled: true },
      });
      expect(await sleeping.answer).toMatchObject({ status: 409, body: { cancelled: true } });
    }
  }, 120_000);
});
