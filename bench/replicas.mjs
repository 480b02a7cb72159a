// What replicas of a named connection (docs/decisions.md 13) do to throughput, and what their lag
// check costs: the same 100-row read through a connection without replicas and through one with
// one streaming replica (a throwaway primary and standby on this machine, so both servers share
// its CPUs), alternated in one run; then the CPU time an idle sqlgate spends per second with and
// without the lag check. Not part of npm run bench: run `npm run build`, then
// `node bench/replicas.mjs`. Prints a table; writes nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import {
  cpuSecondsOf,
  median,
  onCleanup,
  requireBuilt,
  runMain,
  startServerProcess,
  textTable,
} from './lib/harness.mjs';

const ROUNDS = Number(process.env.BENCH_RUNS ?? 3);
const DURATION_S = 4;
const WARMUP_S = 2;
const CONNECTIONS = 10;
const IDLE_S = 10;
const KEY = 'bench-replicas-key-0123456789';
const READ = 'SELECT id, name, score FROM bench_replicas ORDER BY id';

const urlOf = (where) =>
  `postgresql://${encodeURIComponent(where.user)}:${encodeURIComponent(where.password)}@127.0.0.1:${where.port}/${where.database}?sslmode=disable`;

function configFile(name, connection) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlgate-bench-replicas-'));
  onCleanup(() => fs.rmSync(directory, { recursive: true, force: true }));
  const file = path.join(directory, `${name}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      connections: { app: connection },
      keys: [{ id: 'bench', secret: KEY, connections: ['app'] }],
    }),
  );
  return file;
}

async function load(server, duration) {
  const before = cpuSecondsOf(server.pid);
  const result = await autocannon({
    url: `${server.url}/api/query`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ connection: 'app', sql: READ }),
    connections: CONNECTIONS,
    duration,
    timeout: 30,
  });
  const cpu = cpuSecondsOf(server.pid) - before;
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${server.name}: ${bad} failed requests`);
  return { reqPerSec: result['2xx'] / result.duration, cpuUsPerReq: (cpu * 1e6) / result['2xx'] };
}

async function servedBy(server) {
  const response = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ connection: 'app', sql: 'SELECT 1' }),
  });
  return (await response.json()).servedBy;
}

await runMain(async () => {
  const { startLocalCluster, startLocalReplica, eventually } = requireBuilt('packages/testing');
  const primary = await startLocalCluster({ tls: false, replication: true });
  onCleanup(() => primary.stop());
  const replica = await startLocalReplica(primary);
  onCleanup(() => replica.remove());
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: primary.connectionString, ssl: false });
  await client.connect();
  await client.query(`
    CREATE TABLE bench_replicas (id int PRIMARY KEY, name text NOT NULL, score float8 NOT NULL);
    INSERT INTO bench_replicas SELECT g, 'name ' || g, g * 1.5 FROM generate_series(1, 100) g;
    ANALYZE bench_replicas;
  `);
  await client.end();
  const [none, one] = await Promise.all([
    startServerProcess('sqlgate-server.mjs', {
      name: '0 replicas',
      env: { CONFIG_FILE: configFile('none', { url: urlOf(primary) }) },
    }),
    startServerProcess('sqlgate-server.mjs', {
      name: '1 replica',
      env: {
        CONFIG_FILE: configFile('one', { url: urlOf(primary), replicas: [urlOf(replica)] }),
      },
    }),
  ]);
  await eventually(async () => (await servedBy(one)) === 'replica', { withinMs: 30_000 });

  // The lag check's cost first, while both servers are idle.
  const idleBefore = [cpuSecondsOf(none.pid), cpuSecondsOf(one.pid)];
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
  const idleCpuMsPerS = [
    ((cpuSecondsOf(none.pid) - idleBefore[0]) * 1000) / IDLE_S,
    ((cpuSecondsOf(one.pid) - idleBefore[1]) * 1000) / IDLE_S,
  ];

  for (const server of [none, one]) await load(server, WARMUP_S);
  const runs = { none: [], one: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    runs.none.push(await load(none, DURATION_S));
    runs.one.push(await load(one, DURATION_S));
  }
  const summary = (list) => ({
    reqPerSec: median(list.map((run) => run.reqPerSec)),
    cpuUsPerReq: median(list.map((run) => run.cpuUsPerReq)),
  });
  const [a, b] = [summary(runs.none), summary(runs.one)];
  console.log(
    textTable(
      ['connection', 'req/s', 'CPU µs/req', 'idle CPU ms/s'],
      [
        [
          '0 replicas',
          a.reqPerSec.toFixed(0),
          a.cpuUsPerReq.toFixed(0),
          idleCpuMsPerS[0].toFixed(2),
        ],
        [
          '1 replica',
          b.reqPerSec.toFixed(0),
          b.cpuUsPerReq.toFixed(0),
          idleCpuMsPerS[1].toFixed(2),
        ],
      ],
      ['left', 'right', 'right', 'right'],
    ),
  );
  console.log(
    `1 replica / 0 replicas: throughput ×${(b.reqPerSec / a.reqPerSec).toFixed(2)}, ` +
      `sqlgate CPU per request ×${(b.cpuUsPerReq / a.cpuUsPerReq).toFixed(2)}; ` +
      `lag check: ${(idleCpuMsPerS[1] - idleCpuMsPerS[0]).toFixed(2)} ms of sqlgate CPU per second ` +
      `(2 queries a second: the primary's position, the replica's state). ` +
      `Primary and replica share this machine's ${os.cpus().length} CPUs with sqlgate and the load.`,
  );
});
