/**
 * A process that uses the Redis cache ends by itself: after close(), and also without it (no
 * timer, socket or reconnect attempt keeps it alive), whether Redis is up, gone or frozen, and
 * nothing it does crashes the process (no unhandled 'error' event or rejection). Runs the built
 * package in child processes, as an application would load it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';

const BUILT = path.join(__dirname, '..', 'dist', 'index.js');

/** Long enough for a loaded machine; a process kept alive by a handle would run for ever. */
const EXIT_WITHIN_MS = 8000;
/** Jest's own limit for a test that runs child processes. */
const TEST_TIMEOUT_MS = 30_000;

let redis: LocalRedis;

beforeAll(async () => {
  if (!existsSync(BUILT)) {
    throw new Error(`${BUILT} is missing: run \`npm run build\` first (npm test does).`);
  }
  redis = await startLocalRedis();
}, 30_000);
afterEach(() => redis.thaw());
afterAll(() => redis?.stop());

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `body` (an async function body with `cache` and `url` in scope) in a new Node process. */
function runScript(url: string, body: string): Promise<Exit> {
  const script = `
    const { createRedisCache } = require(${JSON.stringify(BUILT)});
    const url = ${JSON.stringify(url)};
    const cache = createRedisCache({ url, prefix: 'exit-' + process.pid + ':' });
    const entry = (key) => ({ key, scope: 'db', server: 'srv', query: 'SELECT 1', reads: null,
      result: { rows: [{ a: 1 }], fields: [], rowCount: 1, command: 'SELECT', truncated: false },
      sizeBytes: 10, executionTime: 1, cachedAt: new Date(), freshMs: 1000, hits: 0 });
    const until = async (call) => { for (let i = 0; i < 200; i++) { try { return await call(); }
      catch { await new Promise((r) => setTimeout(r, 20)); } } throw new Error('never answered'); };
    (async () => { ${body} })().then(
      () => console.log('body done'),
      (error) => { console.error('body failed', error); process.exitCode = 2; },
    );`;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const watchdog = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
}

function expectCleanExit(exit: Exit): void {
  expect({ code: exit.code, signal: exit.signal, stderr: exit.stderr }).toEqual({
    code: 0,
    signal: null,
    stderr: '',
  });
  expect(exit.stdout).toContain('body done');
}

const USE_IT = `
  await until(() => cache.store.size());
  await cache.store.set(entry('k'), 60000);
  await cache.store.get('k');
  await cache.store.invalidate({ scope: 'db' }, null);
  cache.counters.add({ hits: 1, misses: 1, executed: 1, executionMs: 2 });
  await cache.counters.totals();
  cache.counters.add({ hits: 1, misses: 0, executed: 0, executionMs: 0 });
`;

describe('a process using the Redis cache', () => {
  it(
    'ends by itself after close(), having sent its pending counts',
    async () => {
      const exit = await runScript(
        redis.url,
        `${USE_IT}
      await cache.close();
      await cache.close();
      const again = createRedisCache({ url, prefix: 'exit-' + process.pid + ':' });
      console.log('totals', JSON.stringify(await until(() => again.counters.totals())));
      await again.close();`,
      );
      expectCleanExit(exit);
      expect(exit.stdout).toContain('totals {"hits":2,"misses":1,"executed":1,"executionMs":2}');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'ends by itself without close(): no timer or socket keeps it alive',
    async () => {
      expectCleanExit(await runScript(redis.url, USE_IT));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'ends by itself without close() while Redis is gone and it keeps reconnecting',
    async () => {
      const gone = await startLocalRedis();
      await gone.stop();
      const exit = await runScript(
        gone.url,
        `const failed = await cache.store.get('k').then(() => false, () => true);
      cache.counters.add({ hits: 1, misses: 0, executed: 0, executionMs: 0 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      console.log('failed', failed);`,
      );
      expectCleanExit(exit);
      expect(exit.stdout).toContain('failed true');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'ends on close() while Redis is frozen, and without close() too',
    async () => {
      await redis.freeze();
      const closing = await runScript(
        redis.url,
        `const failed = await cache.store.get('k').then(() => false, () => true);
      cache.counters.add({ hits: 1, misses: 0, executed: 0, executionMs: 0 });
      const started = Date.now();
      await cache.close();
      console.log('failed', failed, 'closed in', Date.now() - started);`,
      );
      // Redis stays frozen: close() ended without an answer from it.
      expectCleanExit(closing);
      expect(closing.stdout).toMatch(/failed true closed in \d+/);

      expectCleanExit(
        await runScript(redis.url, `await cache.store.get('k').catch(() => undefined);`),
      );
    },
    TEST_TIMEOUT_MS,
  );
});
