// WORKERS=2 against WORKERS=1 (docs/decisions.md 10.28): the built `sqlgate` command itself, on a
// free port, with logging off, driven by autocannon from this process. npm run bench:workers
// (builds first; not part of npm test or CI). For each workload and connection count, runs
// alternate between the two servers BENCH_RUNS times (default 3) after a warm-up of each; the
// report gives the throughput ratio and the CPU per request of each server's processes together
// (the primary and its workers). On a machine with few cores the load generator and PostgreSQL
// compete with the workers, so the ratio says more about the machine than about sqlgate: the
// number of cores is printed with it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './lib/sqlgate-command.mjs';
import {
  cpuSecondsOf,
  load,
  median,
  onCleanup,
  postJson,
  repoRoot,
  runMain,
  startDatabase,
  markdownTable,
  targetOf,
  textTable,
  WORKERS_END,
  WORKERS_START,
  workersSectionOf,
  writeSection,
} from './lib/harness.mjs';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONNECTIONS = [10, 50];
const BIN = path.join(repoRoot, 'apps', 'http-express', 'dist', 'bin.js');

const WORKLOADS = [
  { id: 'select1', label: 'SELECT 1', body: { sql: 'SELECT 1 AS one' }, cached: false },
  {
    id: 'cached',
    label: 'cached SELECT 1',
    body: { sql: 'SELECT 1 AS one', cache: true },
    cached: true,
  },
];

const fmt = (n, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
const ratioText = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');
const us = (n) => (Number.isFinite(n) ? `${fmt(n)} µs` : '–');
const ms = (n) => (Number.isFinite(n) ? `${n.toFixed(n < 10 ? 2 : 1)} ms` : '–');

/** The pids of a process's children (Linux /proc). */
function childrenOf(pid) {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds of a server: its process and, with workers, theirs. */
function serverCpuSeconds(server) {
  return [server.pid, ...childrenOf(server.pid)].reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
}

/* global fetch -- a Node.js 20 global */
/** Starts the bin with `workers` workers; resolves once it answers /healthz. */
async function startSqlgate(workers) {
  if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first.`);
  const port = await freePort();
  const child = spawn(process.execPath, [BIN], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: String(port),
      HOSTNAME: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WORKERS: String(workers),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited, sleep(20_000, 'timeout')])) === 'timeout') {
      child.kill('SIGKILL');
      await exited;
    }
  };
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null) throw new Error(`WORKERS=${workers} exited before listening`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (waited > 30_000) throw new Error(`WORKERS=${workers} did not start within 30 s`);
    await sleep(100);
  }
  return { name: `WORKERS=${workers}`, url, pid: child.pid, workers, stop };
}

/** One autocannon run, with the CPU of every process of the server. */
async function measure(server, body, connections, duration) {
  const before = serverCpuSeconds(server);
  const result = await load(server, body, connections, duration);
  const cpu = serverCpuSeconds(server) - before;
  return { ...result, cpuUsPerReq: (cpu * 1e6) / Math.max(1, result.ok + result.bad) };
}

await runMain(async () => {
  const started = performance.now();
  const log = (line) =>
    console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  log('starting PostgreSQL…');
  const database = await startDatabase();
  const target = targetOf(database);
  const servers = [await startSqlgate(1), await startSqlgate(2)];
  log(servers.map((s) => `${s.name} ${s.url} (pid ${s.pid})`).join(', '));

  for (const workload of WORKLOADS) {
    for (const server of servers) {
      const body = { ...target, ...workload.body };
      await postJson(`${server.url}/api/query`, body);
      const { status, json } = await postJson(`${server.url}/api/query`, body);
      if (status !== 200 || json?.rows?.[0]?.one !== 1) {
        throw new Error(
          `${server.name} answered ${workload.label}: ${status} ${JSON.stringify(json)}`,
        );
      }
    }
  }
  for (const server of servers) {
    await load(server, { ...target, sql: 'SELECT 1 AS one' }, 10, 3);
  }

  const rows = [];
  for (const workload of WORKLOADS) {
    const body = { ...target, ...workload.body };
    for (const connections of CONNECTIONS) {
      for (const server of servers) await load(server, body, connections, WARMUP_S);
      const runs = servers.map(() => []);
      for (let run = 0; run < RUNS; run++) {
        for (const [index, server] of servers.entries()) {
          runs[index].push(await measure(server, body, connections, DURATION_S));
        }
      }
      const [one, two] = runs.map((each) => ({
        reqPerSec: median(each.map((r) => r.reqPerSec)),
        p99: median(each.map((r) => r.p99)),
        cpuUsPerReq: median(each.map((r) => r.cpuUsPerReq)),
        bad: each.reduce((sum, r) => sum + r.bad, 0),
      }));
      rows.push({ workload, connections, one, two, ratio: two.reqPerSec / one.reqPerSec });
      log(
        `${workload.id} c=${connections}: WORKERS=1 ${runs[0].map((r) => fmt(r.reqPerSec)).join(' / ')} req/s, ` +
          `WORKERS=2 ${runs[1].map((r) => fmt(r.reqPerSec)).join(' / ')} req/s; ratio ${ratioText(rows.at(-1).ratio)}`,
      );
    }
  }
  await Promise.all(servers.map((server) => server.stop()));

  console.log('');
  console.log(
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model?.trim() ?? 'unknown'}), Node.js ${process.version}; ` +
      `load generator and PostgreSQL on the same machine`,
  );
  console.log('');
  const header = [
    'workload',
    'conns',
    'WORKERS=1 req/s',
    'WORKERS=2 req/s',
    '2/1',
    'WORKERS=1 CPU/req',
    'WORKERS=2 CPU/req',
    'WORKERS=1 p99',
    'WORKERS=2 p99',
  ];
  const cells = rows.map((r) => [
    r.workload.label,
    String(r.connections),
    fmt(r.one.reqPerSec),
    fmt(r.two.reqPerSec),
    ratioText(r.ratio),
    us(r.one.cpuUsPerReq),
    us(r.two.cpuUsPerReq),
    ms(r.one.p99),
    ms(r.two.p99),
  ]);
  const align = ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'];
  console.log(textTable(header, cells, align));
  const section = [
    WORKERS_START,
    '## WORKERS',
    '',
    `\`npm run bench\` (bench/workers.mjs): the built \`sqlgate\` command with \`WORKERS=2\` against \`WORKERS=1\`, alternating runs, medians; CPU per request counts all of a server's processes. ${os.cpus().length} CPUs shared with PostgreSQL and the load generator: a second worker can only help as far as a core is free.`,
    '',
    markdownTable(header, cells, align),
    WORKERS_END,
  ].join('\n');
  await writeSection(section, workersSectionOf);
  const bad = rows.filter((r) => r.one.bad > 0 || r.two.bad > 0);
  if (bad.length) {
    console.log(
      `\nnon-2xx responses or errors in: ${bad.map((r) => `${r.workload.id}@${r.connections}`).join(', ')}`,
    );
    process.exitCode = 1;
  }
});
