/**
 * A result cache's Redis that is down or unreachable at start (docs/decisions.md 10.40): logged at
 * start, `/healthz` answers 200 with `status: degraded` until Redis answers, and requests are
 * served uncached meanwhile. A real Redis started and stopped with @sqlgate/testing, and a port
 * with nothing listening.
 */
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import { CACHE_AVAILABLE_MESSAGE, CACHE_UNAVAILABLE_MESSAGE } from '../src/cache-start-check';
import { startServer, type RunningServer } from '../src/server';
import { captureLogs, refusingPort, target } from './support';

const SECRET = 'a shared secret of at least thirty-two characters';

let redis: LocalRedis;
beforeAll(async () => {
  redis = await startLocalRedis();
}, 30_000);
afterAll(() => redis?.stop());

/** A server whose result cache is the Redis at `url`, logging into `logs`. */
function startWithRedis(url: string, logs: ReturnType<typeof captureLogs>): Promise<RunningServer> {
  return startServer({
    port: 0,
    hostname: '127.0.0.1',
    logger: logs.logger,
    queryCacheRedisUrl: url,
    queryCacheSecret: SECRET,
  });
}

const health = async (server: RunningServer): Promise<{ status: number; body: unknown }> => {
  const response = await fetch(`${server.url}/healthz`);
  return { status: response.status, body: await response.json() };
};

/** Asks `/healthz` every 100 ms until its body is `expected` or `limitMs` passed; the last body. */
async function healthUntil(server: RunningServer, expected: unknown, limitMs: number) {
  let last = await health(server);
  for (let waited = 0; waited < limitMs; waited += 100) {
    if (JSON.stringify(last.body) === JSON.stringify(expected)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await health(server);
  }
  return last;
}

/** The log lines with `message`, once at least one is there (or `limitMs` passed). */
async function logged(logs: ReturnType<typeof captureLogs>, message: string, limitMs = 3000) {
  const lines = () => logs.lines().filter((line) => line.msg === message);
  for (let waited = 0; lines().length === 0 && waited < limitMs; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return lines();
}

const DEGRADED = { status: 'degraded', cache: 'unavailable' };

it('says at start that nothing answers at QUERY_CACHE_REDIS_URL, and serves uncached', async () => {
  const logs = captureLogs('info');
  const server = await startWithRedis(`redis://127.0.0.1:${await refusingPort()}`, logs);
  try {
    const errors = await logged(logs, CACHE_UNAVAILABLE_MESSAGE);
    expect(errors).toEqual([
      expect.objectContaining({ level: 50, reason: expect.stringMatching(/Redis/) }),
    ]);
    // 200: a load balancer must keep an instance that still serves every request.
    expect(await health(server)).toEqual({ status: 200, body: DEGRADED });
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(target({ sql: 'SELECT 1 AS one', cache: { ttlMs: 60_000 } })),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      rows: [{ one: 1 }],
      cacheStatus: 'bypass',
      cacheReason: 'unavailable',
    });
    // Said once, not at every check.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(logs.lines().filter((line) => line.msg === CACHE_UNAVAILABLE_MESSAGE)).toHaveLength(1);
  } finally {
    await server.close();
  }
}, 20_000);

it('is ok with a Redis that answers, degraded while it is down, ok again once it is back', async () => {
  const logs = captureLogs('info');
  const server = await startWithRedis(redis.url, logs);
  try {
    expect(await health(server)).toEqual({ status: 200, body: { status: 'ok' } });
    await redis.kill();
    expect(await healthUntil(server, DEGRADED, 5000)).toEqual({ status: 200, body: DEGRADED });
    await redis.restart();
    expect(await healthUntil(server, { status: 'ok' }, 5000)).toEqual({
      status: 200,
      body: { status: 'ok' },
    });
    // It answered at start: nothing to report.
    expect(logs.lines().filter((line) => line.msg === CACHE_UNAVAILABLE_MESSAGE)).toEqual([]);
  } finally {
    await server.close();
  }
}, 30_000);

it('logs when a Redis that was down at start answers, and is ok from then on', async () => {
  await redis.kill();
  const logs = captureLogs('info');
  const server = await startWithRedis(redis.url, logs);
  try {
    expect(await logged(logs, CACHE_UNAVAILABLE_MESSAGE)).toHaveLength(1);
    expect(await health(server)).toEqual({ status: 200, body: DEGRADED });
    await redis.restart();
    expect(await logged(logs, CACHE_AVAILABLE_MESSAGE, 8000)).toEqual([
      expect.objectContaining({ level: 30 }),
    ]);
    expect(await health(server)).toEqual({ status: 200, body: { status: 'ok' } });
  } finally {
    await server.close();
  }
}, 30_000);
