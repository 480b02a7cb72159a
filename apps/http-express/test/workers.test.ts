/**
 * WORKERS=n (docs/decisions.md 10.28): the built bin with two workers against a throwaway cluster.
 * Requests go on fresh TCP connections, so that node:cluster spreads them over the workers; which
 * worker ran a request is learnt from PostgreSQL (`inet_client_port()` names the connection, /proc
 * its owner), never from anything the server exposes.
 */
import { spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { eventually, startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import type { Client } from 'pg';
import { rawRequest } from './raw-http';
import { BIN, startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { clusterTarget, connectObserver } from './support';
import { childrenOf, isRunning, ownerOfLocalPort } from './worker-processes';

let cluster: LocalCluster;
let observer: Client;
/** Every worker pid seen, so that none outlives the file (a stopped one would, for ever). */
const seenWorkers = new Set<number>();

beforeAll(async () => {
  cluster = await startLocalCluster({ tls: false });
  observer = await connectObserver(cluster);
  await observer.query('CREATE TABLE coherence (id int PRIMARY KEY, v int NOT NULL)');
  await observer.query('INSERT INTO coherence VALUES (1, 0)');
}, 60_000);

afterAll(async () => {
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

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request on a connection of its own. */
async function fresh(
  server: SqlgateProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await rawRequest({
    port: Number(new URL(server.url).port),
    method,
    path,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: response.json() as Record<string, unknown> };
}

const query = (server: SqlgateProcess, body: Record<string, unknown>) =>
  fresh(server, 'POST', '/api/query', { ...clusterTarget(cluster), ...body });

function workersOf(server: SqlgateProcess): number[] {
  const workers = childrenOf(server.pid);
  for (const pid of workers) seenWorkers.add(pid);
  return workers;
}

/** The worker that ran a request, through the port of its connection to PostgreSQL. */
async function answeringWorker(
  run: (body: Record<string, unknown>) => Promise<Answer>,
  workers: number[],
): Promise<number | undefined> {
  const answer = await run({ sql: 'SELECT inet_client_port() AS port' });
  const port = (answer.body.rows as { port: number }[] | undefined)?.[0]?.port;
  return port === undefined ? undefined : ownerOfLocalPort(port, workers);
}

function coherenceValue(answer: Answer): number | undefined {
  return (answer.body.rows as { v: number }[] | undefined)?.[0]?.v;
}

describe('WORKERS=2', () => {
  let server: SqlgateProcess;

  beforeAll(async () => {
    server = await startSqlgateProcess({ WORKERS: '2' });
    workersOf(server);
  }, 30_000);
  afterAll(() => server?.stop());
  afterEach(() => {
    if (!server.alive()) throw new Error(`the primary ended:\n${server.output()}`);
  });

  it('runs two workers, and fresh connections reach both', async () => {
    const workers = workersOf(server);
    expect(workers).toHaveLength(2);
    expect(await bothAnswer(workers)).toEqual([...workers].sort());
  });

  it('never serves a cached read older than a write answered before it: 1,000 writes, reads on other connections', async () => {
    // A deterministic mix: 1 to 3 reads after each write, so that writes and reads move
    // between the workers and some reads are served from a worker's cache.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const read = { sql: 'SELECT v FROM coherence WHERE id = 1', cache: { ttlMs: 60_000 } };
    let acknowledged = 0;
    let stale = 0;
    let served = 0;
    let cachedReads = 0;
    let running = true;
    const failures: string[] = [];
    // Readers racing the writes with a slower read (a few milliseconds in PostgreSQL): one that
    // began before a write often stores its result after the write's invalidation reached its
    // worker, and must be refused; any read that began after a write's answer must see it.
    const slowRead = {
      sql: 'SELECT v, (SELECT count(*) FROM generate_series(1, 20000)) AS n FROM coherence WHERE id = 1',
      cache: { ttlMs: 60_000 },
    };
    const racer = async () => {
      while (running) {
        const floor = acknowledged;
        const answer = await query(server, slowRead);
        const value = coherenceValue(answer);
        if (answer.status !== 200 || value === undefined) failures.push(JSON.stringify(answer));
        else if (value < floor) stale += 1;
      }
    };
    const racers = [racer(), racer()];
    try {
      for (let write = 1; write <= 1000; write++) {
        const written = await query(server, {
          sql: `UPDATE coherence SET v = ${write} WHERE id = 1`,
        });
        if (written.status !== 200) failures.push(JSON.stringify(written));
        acknowledged = write;
        const reads = 1 + Math.floor(random() * 3);
        for (let index = 0; index < reads; index++) {
          const answer = await query(server, read);
          served += 1;
          if (answer.body.cached === true) cachedReads += 1;
          if (coherenceValue(answer) !== write) stale += 1;
        }
      }
    } finally {
      running = false;
      await Promise.all(racers);
    }
    expect(failures).toEqual([]);
    expect(stale).toBe(0);
    expect(served).toBeGreaterThan(1000);
    // The cache was in use, not bypassed.
    expect(cachedReads).toBeGreaterThan(50);
  }, 180_000);

  it('answers the same counters whichever worker is asked, and the cache and pools of both', async () => {
    expect((await fresh(server, 'DELETE', '/api/stats/cache')).status).toBe(200);
    const workers = workersOf(server);
    // One statement cached by both workers: one store cannot hold two entries under one key, so
    // two entries of it are the two workers' stores seen together.
    const statement = { sql: 'SELECT 40 + 2 AS answer', cache: { ttlMs: 60_000 } };
    let misses = 0;
    let sent = 0;
    while (misses < 2 && sent < 40) {
      const answer = await query(server, statement);
      sent += 1;
      expect(answer.status).toBe(200);
      if (answer.body.cacheStatus === 'miss') misses += 1;
    }
    expect(misses).toBe(2);
    // Once every worker has sent what it counted (in batches), every reading is the same.
    const readings: Answer[] = [];
    await eventually(async () => {
      readings.splice(0);
      for (let index = 0; index < 6; index++) {
        readings.push(await fresh(server, 'GET', '/api/stats/cache'));
      }
      for (const reading of readings) expect(reading).toEqual(readings[0]);
    });
    const { stats, entries } = readings[0]?.body as {
      stats: { cacheSize: number; totalQueries: number; cacheHits: number };
      entries: { query: string }[];
    };
    expect(stats.cacheSize).toBe(2);
    expect(entries.map((entry) => entry.query)).toEqual([
      'SELECT 40 + 2 AS answer',
      'SELECT 40 + 2 AS answer',
    ]);
    expect(stats.cacheHits).toBe(
      Number(/^sqlgate_cache_hits_total (\d+)$/m.exec(await metricsText())?.[1]),
    );

    // Pools: both workers' connections (each has run a query), as PostgreSQL counts them.
    expect(await bothAnswer(workers)).toEqual([...workers].sort());
    const backends = Number(
      (
        await observer.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'sqlgate'",
        )
      ).rows[0]?.n,
    );
    const pools = (await fresh(server, 'GET', '/api/stats/pools')).body.stats as {
      totalConnections: number;
    }[];
    expect(pools).toHaveLength(1);
    expect(pools[0]?.totalConnections).toBe(backends);
    expect(backends).toBeGreaterThanOrEqual(2);
    const metrics = await metricsText();
    expect(metrics).toMatch(
      new RegExp(`^sqlgate_pool_connections\\{pool="[^"]+",state="total"\\} ${backends}$`, 'm'),
    );

    // A clear reaches every worker.
    expect((await fresh(server, 'DELETE', '/api/stats/cache')).status).toBe(200);
    for (let index = 0; index < 4; index++) {
      const { body } = await fresh(server, 'GET', '/api/stats/cache');
      expect(body).toMatchObject({ stats: { cacheSize: 0 }, entries: [] });
    }
  });

  /**
   * The workers that answered fresh connections, sorted, asking until both did or 20 s passed
   * (the kernel, not a strict rotation, decides which worker accepts a connection, and a worker
   * just started may take a while on a busy machine before it accepts any).
   */
  async function bothAnswer(workers: number[]): Promise<(number | undefined)[]> {
    const answered = new Set<number | undefined>();
    await eventually(
      async () => {
        answered.add(await answeringWorker((body) => query(server, body), workers));
        return answered.size >= 2;
      },
      { withinMs: 20_000 },
    ).catch(() => undefined); // the caller's expectation says which one never answered
    return [...answered].sort();
  }

  async function metricsText(): Promise<string> {
    const response = await rawRequest({
      port: Number(new URL(server.url).port),
      path: '/metrics',
    });
    expect(response.status).toBe(200);
    return response.text;
  }

  it('replaces a worker killed mid-load; only requests in flight on it may fail', async () => {
    const [victim, survivor] = workersOf(server) as [number, number];
    type Outcome = { startedMs: number; ok: boolean; detail: string };
    const outcomes: Outcome[] = [];
    const started = performance.now();
    let running = true;
    const loop = async () => {
      while (running) {
        const startedMs = performance.now() - started;
        try {
          const answer = await query(server, { sql: 'SELECT 1 AS one', cache: true });
          outcomes.push({ startedMs, ok: answer.status === 200, detail: String(answer.status) });
        } catch (error) {
          outcomes.push({ startedMs, ok: false, detail: (error as Error).message });
        }
      }
    };
    const loops = Array.from({ length: 6 }, loop);
    await eventually(() => outcomes.length >= 20);
    process.kill(victim, 'SIGKILL');
    await eventually(() => {
      const now = workersOf(server);
      return now.length === 2 && !now.includes(victim);
    });
    const replacedAtMs = performance.now() - started;
    const startedAfterReplacement = () =>
      outcomes.filter((outcome) => outcome.startedMs > replacedAtMs);
    await eventually(() => startedAfterReplacement().length >= 20, { withinMs: 20_000 });
    running = false;
    await Promise.all(loops);
    const failed = outcomes.filter((outcome) => !outcome.ok);
    // A connection handed to the victim before the primary saw it die is reset with it: those
    // requests, at most one per loop, are the only ones that may fail; none after its replacement.
    expect(failed.length).toBeLessThanOrEqual(loops.length);
    for (const failure of failed) {
      expect(failure.detail).not.toMatch(/^\d+$/);
      expect(failure.startedMs).toBeLessThan(replacedAtMs);
    }
    expect(startedAfterReplacement().every((outcome) => outcome.ok)).toBe(true);
    // The replacement serves.
    const workers = workersOf(server);
    expect(workers).toContain(survivor);
    expect(await bothAnswer(workers)).toEqual([...workers].sort());
  }, 60_000);

  it('kills and replaces a frozen worker during a write, and answers the write within the bound', async () => {
    // The write goes on a kept-alive connection whose worker is known; the other one is frozen.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const onKeptConnection = (body: Record<string, unknown>) =>
      new Promise<Answer>((resolve, reject) => {
        const started = performance.now();
        const outgoing = request(
          `${server.url}/api/query`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (incoming) => {
            let text = '';
            incoming.setEncoding('utf8');
            incoming.on('data', (chunk: string) => (text += chunk));
            incoming.on('end', () =>
              resolve({
                status: incoming.statusCode ?? 0,
                body: { ...(JSON.parse(text) as object), elapsedMs: performance.now() - started },
              }),
            );
          },
        );
        outgoing.on('error', reject);
        outgoing.end(JSON.stringify({ ...clusterTarget(cluster), ...body }));
      });
    try {
      const workers = workersOf(server);
      const writer = await answeringWorker(onKeptConnection, workers);
      expect(workers).toContain(writer);
      const frozen = workers.find((pid) => pid !== writer) as number;
      // Both workers hold the current value in their caches.
      const read = { sql: 'SELECT v FROM coherence WHERE id = 1', cache: { ttlMs: 60_000 } };
      for (let index = 0; index < 4; index++) await query(server, read);

      process.kill(frozen, 'SIGSTOP');
      const written = await onKeptConnection({
        sql: 'UPDATE coherence SET v = -1 WHERE id = 1',
      });
      expect(written.status).toBe(200);
      // It waited for the frozen worker's acknowledgement (1 s; a frozen worker never gives it),
      // then for its death: answered at all, the write did not wait for the frozen worker.
      expect(written.body.elapsedMs).toBeGreaterThan(900);
      // Killed before the write was answered; gone once the kernel has reaped it.
      await eventually(() => !isRunning(frozen));
      await eventually(() => {
        const now = workersOf(server);
        return now.length === 2 && !now.includes(frozen);
      });
      for (let index = 0; index < 6; index++) {
        expect(coherenceValue(await query(server, read))).toBe(-1);
      }
    } finally {
      agent.destroy();
    }
  }, 60_000);
});

describe('stopping WORKERS=2', () => {
  it('SIGTERM to the primary: the request in flight is answered, every process exits, code 0', async () => {
    const server = await startSqlgateProcess({ WORKERS: '2' });
    try {
      const workers = workersOf(server);
      expect(workers).toHaveLength(2);
      const inFlight = query(server, { sql: "SELECT pg_sleep(1), 1 AS done, 'in-flight'" });
      // In flight: running in PostgreSQL when the primary is told to stop.
      await eventually(async () => {
        const { rows } = await observer.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%in-flight%' AND pid <> pg_backend_pid()",
        );
        return rows.length === 1;
      });
      process.kill(server.pid, 'SIGTERM');
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.body.rows).toEqual([{ pg_sleep: '', done: 1, '?column?': 'in-flight' }]);
      await server.settle(15_000);
      expect(server.exit()).toBe('exited with code 0');
      for (const pid of workers) expect(isRunning(pid)).toBe(false);
    } finally {
      await server.stop();
    }
  }, 30_000);
});

describe('WORKERS=1 and bad values', () => {
  it('WORKERS=1 is the single process it always was: no worker, no primary', async () => {
    const server = await startSqlgateProcess({ WORKERS: '1', LOG_LEVEL: 'info' });
    try {
      expect(childrenOf(server.pid)).toEqual([]);
      const answer = await query(server, { sql: 'SELECT 1 AS one', cache: true });
      expect(answer).toMatchObject({ status: 200, body: { rows: [{ one: 1 }] } });
      expect((await fresh(server, 'GET', '/api/stats/pools')).body.stats).toHaveLength(1);
      expect(server.output()).not.toMatch(/worker/);
      process.kill(server.pid, 'SIGTERM');
      await server.settle(15_000);
      expect(server.exit()).toBe('exited with code 0');
    } finally {
      await server.stop();
    }
  });

  it.each(['0', 'abc'])('refuses WORKERS=%s with one line naming it, and exits 1', (value) => {
    const result = spawnSync(process.execPath, [BIN], {
      env: { ...process.env, WORKERS: value, PORT: '0' },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `sqlgate: WORKERS must be an integer from 1 to 1024, got '${value}'\n`,
    );
  });
});
