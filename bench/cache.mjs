// What the result cache saves, and what sharing it through Redis costs: one 100-row × 4-column read
// through sqlgate uncached (`cache: false`), cached in its own memory, and cached in Redis
// (QUERY_CACHE_REDIS_URL, a throwaway redis-server), alternated in one run with the CPU time per
// request. Part of npm run bench; writes the cache section of docs/benchmarks.md.
import {
  CACHE_END,
  CACHE_START,
  cacheSectionOf,
  connectClient,
  load,
  markdownTable,
  median,
  onCleanup,
  requireBuilt,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
  textTable,
  writeSection,
} from './lib/harness.mjs';

const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);
const DURATION_S = 4;
const WARMUP_S = 2;
const CONNECTIONS = 10;
const READ = 'SELECT id, name, score, created_at FROM bench_cache ORDER BY id';

async function loadOk(server, body, duration) {
  const run = await load(server, body, CONNECTIONS, duration);
  if (run.bad > 0) throw new Error(`${server.name}: ${run.bad} failed requests`);
  return run;
}

await runMain(async () => {
  const database = await startDatabase();
  const client = await connectClient(database);
  await client.query(`
    DROP TABLE IF EXISTS bench_cache;
    CREATE TABLE bench_cache (id int PRIMARY KEY, name text NOT NULL, score float8 NOT NULL, created_at timestamptz NOT NULL);
    INSERT INTO bench_cache
      SELECT g, 'name ' || g, g * 1.5, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour'
      FROM generate_series(1, 100) g;
    ANALYZE bench_cache;
  `);
  await client.end();
  const { startLocalRedis } = requireBuilt('packages/testing');
  const redis = await startLocalRedis();
  onCleanup(() => redis.stop());
  const [plain, memory, shared] = await Promise.all([
    startServerProcess('sqlgate-server.mjs', { name: 'uncached' }),
    startServerProcess('sqlgate-server.mjs', { name: 'memory cache' }),
    startServerProcess('sqlgate-server.mjs', {
      name: 'Redis cache',
      env: {
        QUERY_CACHE_REDIS_URL: redis.url,
        QUERY_CACHE_SECRET: 'a bench secret of at least thirty-two characters',
      },
    }),
  ]);
  const bodies = new Map([
    [plain, { ...targetOf(database), sql: READ, cache: false }],
    [memory, { ...targetOf(database), sql: READ, cache: { ttlMs: 600_000 } }],
    [shared, { ...targetOf(database), sql: READ, cache: { ttlMs: 600_000 } }],
  ]);
  const sides = [plain, memory, shared];
  /* global fetch -- a Node.js 20 global */
  for (const server of sides) {
    const answer = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(bodies.get(server)),
    }).then((response) => response.json());
    if (answer.rows?.length !== 100) throw new Error(`${server.name}: wrong answer`);
    await loadOk(server, bodies.get(server), WARMUP_S);
  }
  const runs = new Map(sides.map((server) => [server, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const server of order) {
      runs.get(server).push(await loadOk(server, bodies.get(server), DURATION_S));
    }
  }
  const summary = sides.map((server) => ({
    name: server.name,
    reqPerSec: median(runs.get(server).map((run) => run.reqPerSec)),
    cpuUsPerReq: median(runs.get(server).map((run) => run.cpuUsPerReq)),
    p99: median(runs.get(server).map((run) => run.p99)),
  }));
  const uncached = summary[0];
  const header = ['sqlgate', 'req/s (median)', 'CPU µs/req (median)', 'p99 ms', 'vs uncached'];
  const rows = summary.map((side) => [
    side.name,
    side.reqPerSec.toLocaleString('en-US', { maximumFractionDigits: 0 }),
    side.cpuUsPerReq.toFixed(1),
    String(side.p99),
    `${(side.reqPerSec / uncached.reqPerSec).toFixed(2)}×`,
  ]);
  console.log(textTable(header, rows, ['l', 'r', 'r', 'r', 'r']));
  const section = [
    CACHE_START,
    '## Result cache',
    '',
    `\`npm run bench\` (bench/cache.mjs): one 100-row × 4-column read at ${CONNECTIONS} connections through three sqlgate processes: uncached (\`cache: false\`), cached in the process's memory, and cached in Redis (\`QUERY_CACHE_REDIS_URL\`, a local redis-server on the same 2 cores); a ${WARMUP_S} s warm-up each, then ${ROUNDS} rounds of ${DURATION_S} s runs alternating the three; medians. CPU is the sqlgate process's only (Redis's own is not counted).`,
    '',
    markdownTable(header, rows, ['l', 'r', 'r', 'r', 'r']),
    CACHE_END,
  ].join('\n');
  await writeSection(section, cacheSectionOf);
});
