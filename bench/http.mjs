// HTTP throughput, latency, CPU and system calls per request of sqlgate as users run it: the
// `sqlgate` command at its default configuration (logging at info on a pipe the bench reads,
// metrics on), beside the same with LOG_LEVEL=warn, the fast peer (node:http + postgres.js, the
// speed to beat) and, for the cached read, a bare node:http server sending sqlgate's own answer
// bytes. The raw pg driver is the ceiling. npm run bench (builds first).
//
// Each workload gets fresh server processes: they start, are checked, warm up, run BENCH_RUNS
// rounds (default 3) at each connection count with the order of the servers rotating from round
// to round, and stop. Medians of the rounds are reported. Writes docs/benchmarks.md, keeping the
// sections other scripts write.
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import {
  connectClient,
  load,
  machineFacts,
  median,
  postJson,
  require,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
} from './lib/harness.mjs';
import { cannedAnswerOf, rawAnswer, withoutDate } from './lib/canned-answer.mjs';
import { startSqlgateCommand } from './lib/sqlgate-command.mjs';
import { syscallsPerRequest } from './lib/syscalls.mjs';
import { printReport, writeReport } from './lib/http-report.mjs';
import { BENCH_T_SQL, prepareBenchTables, requestBody, WORKLOADS } from './lib/workloads.mjs';

const SETTINGS = {
  durationS: Number(process.env.BENCH_DURATION_S ?? 4),
  warmupS: Number(process.env.BENCH_WARMUP_S ?? 1),
  runs: Number(process.env.BENCH_RUNS ?? 3),
  connections: [10, 50],
  /** Fresh processes run this long at 10 connections first, for their JIT and pools. */
  firstWarmupS: 2,
  sleepRequests: 5,
  /** Workloads whose system calls are counted, and how many requests strace watches. */
  straceWorkloads: ['select1', 'cached'],
  straceRequests: Number(process.env.BENCH_STRACE_REQUESTS ?? 2000),
  straceConnections: 10,
};

/**
 * sqlgate's settings that the comparison depends on: a pool of 10, as the fast peer's, and the
 * default row limit, written out so that the bench shows them. Everything else is the default.
 */
const SQLGATE_ENV = { POOL_MAX: '10', MAX_ROWS: '10000' };

/** The servers compared; `side` names the request body of a workload each one gets. */
const SERVERS = [
  {
    id: 'sqlgate',
    name: 'sqlgate',
    side: 'sqlgate',
    start: () => startSqlgateCommand({ name: 'sqlgate', env: SQLGATE_ENV }),
  },
  {
    id: 'sqlgateWarn',
    name: 'sqlgate LOG_LEVEL=warn',
    side: 'sqlgate',
    start: () =>
      startSqlgateCommand({
        name: 'sqlgate LOG_LEVEL=warn',
        env: { ...SQLGATE_ENV, LOG_LEVEL: 'warn' },
      }),
  },
  {
    id: 'fast',
    name: 'fast peer',
    side: 'fast',
    start: () => startServerProcess('fast-server.mjs', { name: 'fast peer' }),
  },
  {
    id: 'canned',
    name: 'bare node:http, canned bytes',
    side: 'sqlgate',
    // It answers every request with the cached SELECT 1's bytes: a floor for that workload only.
    workloads: ['cached'],
    start: ({ cannedAnswer }) =>
      startServerProcess('canned-server.mjs', {
        name: 'bare node:http, canned bytes',
        env: { CANNED_ANSWER: cannedAnswer },
      }),
  },
];

const serversOf = (workload) =>
  SERVERS.filter((server) => !server.workloads || server.workloads.includes(workload.id));

const benchStarted = performance.now();
const log = (line) =>
  console.log(`[${((performance.now() - benchStarted) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const fmt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');

// ---------------------------------------------------------------------------------------------
// Before the workloads: one sqlgate process gives the cached answer's bytes and the parallel
// reads' wall time.

/** The wall times of `count` requests of `sql`, one after another. */
async function wallTimes(url, target, sql, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const { status, json, ms } = await postJson(`${url}/api/query`, { ...target, sql });
    if (status !== 200) {
      throw new Error(`${sql} failed: ${status} ${JSON.stringify(json).slice(0, 300)}`);
    }
    times.push(ms);
  }
  return times;
}

/**
 * sqlgate's raw answer to a cached SELECT 1 (the second request, served from the cache), and the
 * wall time of three pg_sleep(0.2) in one request, which its parallel path should hold near 0.2 s.
 */
async function probeSqlgate(target) {
  const sqlgate = await startSqlgateCommand({ name: 'sqlgate (probe)', env: SQLGATE_ENV });
  try {
    const cachedBody = requestBody(cachedWorkload(), 'sqlgate', target);
    await rawAnswer(sqlgate.url, cachedBody);
    const cannedRaw = await rawAnswer(sqlgate.url, cachedBody);
    const sleepSql = Array(3).fill('SELECT pg_sleep(0.2)').join(';\n');
    const [cold, ...times] = await wallTimes(
      sqlgate.url,
      target,
      sleepSql,
      SETTINGS.sleepRequests + 1,
    );
    return {
      cannedRaw,
      cannedAnswer: cannedAnswerOf(cannedRaw),
      sleep: { cold, min: Math.min(...times), median: median(times) },
    };
  } finally {
    await sqlgate.stop();
  }
}

const cachedWorkload = () => WORKLOADS.find((workload) => workload.id === 'cached');

// ---------------------------------------------------------------------------------------------
// One workload: fresh servers, checked, warmed up, measured in rotating rounds, stopped.

/** Throws unless `server` gives the workload's answer (so a wrong answer cannot pass for fast). */
async function verifyAnswer(server, workload, body, context) {
  if (server.id === 'canned') {
    const raw = await rawAnswer(server.url, body);
    if (withoutDate(raw) !== withoutDate(context.cannedRaw)) {
      throw new Error(`${server.name} does not send sqlgate's bytes: ${withoutDate(raw)}`);
    }
    return;
  }
  const check = (server.side === 'fast' && workload.fastCheck) || workload.check;
  const extra = server.side === 'sqlgate' ? workload.sqlgateCheck : undefined;
  // Twice: the second answer of a cached read must come from the cache.
  await postJson(`${server.url}/api/query`, body);
  const { status, json } = await postJson(`${server.url}/api/query`, body);
  if (status !== 200 || !json || !check(json) || (extra && !extra(json))) {
    throw new Error(
      `${server.name} answered ${workload.label} unexpectedly: ${status} ${JSON.stringify(json).slice(0, 400)}`,
    );
  }
}

/** One measured run; for sqlgate also the bytes of log it wrote per request. */
async function measure(server, body, connections, duration) {
  const logBefore = server.logBytes?.() ?? NaN;
  const run = await load(server, body, connections, duration);
  const logged = (server.logBytes?.() ?? NaN) - logBefore;
  return { ...run, logBytesPerReq: logged / (run.ok + run.bad) };
}

/** The servers in round `round`'s order: each round starts one further along. */
const rotated = (servers, round) => servers.map((_, i) => servers[(i + round) % servers.length]);

/** A server's runs of one workload and connection count: their medians, and its best run. */
const summarize = (runs) => ({
  runs,
  reqPerSec: median(runs.map((r) => r.reqPerSec)),
  best: Math.max(...runs.map((r) => r.reqPerSec)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  cpuUsPerReq: median(runs.map((r) => r.cpuUsPerReq)),
  logBytesPerReq: median(runs.map((r) => r.logBytesPerReq)),
  bad: runs.reduce((sum, r) => sum + r.bad, 0),
});

/** A warm-up of each server, then SETTINGS.runs rounds; the summary of each server's runs. */
async function measureRounds(running, bodies, connections) {
  for (const server of running) {
    await load(server, bodies.get(server), connections, SETTINGS.warmupS);
  }
  const runs = new Map(running.map((server) => [server, []]));
  for (let round = 0; round < SETTINGS.runs; round++) {
    for (const server of rotated(running, round)) {
      runs
        .get(server)
        .push(await measure(server, bodies.get(server), connections, SETTINGS.durationS));
    }
  }
  return Object.fromEntries(running.map((server) => [server.id, summarize(runs.get(server))]));
}

function logRow(workload, connections, byServer, running) {
  log(
    `${workload.id} c=${connections}: ` +
      running
        .map((server) => {
          const result = byServer[server.id];
          const rates = result.runs.map((r) => fmt(r.reqPerSec)).join(' / ');
          return `${server.name} ${rates} req/s (${fmt(result.cpuUsPerReq)} µs CPU/req)`;
        })
        .join(', '),
  );
}

/** System calls per request of each server, on the workload's body. */
async function measureSyscalls(workload, running, bodies) {
  const counts = [];
  for (const server of running) {
    const count = await syscallsPerRequest(server, bodies.get(server), {
      requests: SETTINGS.straceRequests,
      connections: SETTINGS.straceConnections,
    });
    counts.push({ workload, server, ...count });
    log(
      `${workload.id} syscalls, ${server.name}: ` +
        (count.failed
          ? `strace could not attach: ${count.failed}`
          : `${count.total.toFixed(1)}/req`),
    );
  }
  return counts;
}

/** Starts the servers of `workload`, runs its rounds (and strace), stops them. */
async function measureWorkload(workload, context) {
  const running = await Promise.all(
    serversOf(workload).map(async (server) => ({ ...server, ...(await server.start(context)) })),
  );
  try {
    const bodies = new Map(
      running.map((server) => [server, requestBody(workload, server.side, context.target)]),
    );
    for (const server of running) {
      await verifyAnswer(server, workload, bodies.get(server), context);
    }
    for (const server of running) {
      await load(server, bodies.get(server), 10, SETTINGS.firstWarmupS);
    }
    const rows = [];
    for (const connections of SETTINGS.connections) {
      const byServer = await measureRounds(running, bodies, connections);
      logRow(workload, connections, byServer, running);
      rows.push({ workload, connections, byServer });
    }
    const syscalls = SETTINGS.straceWorkloads.includes(workload.id)
      ? await measureSyscalls(workload, running, bodies)
      : [];
    return { rows, syscalls };
  } finally {
    await Promise.all(running.map((server) => server.stop()));
  }
}

// ---------------------------------------------------------------------------------------------
// The ceiling: the raw driver, same concurrency, same pool size, no HTTP.

/** N concurrent loops of pool.query(sql) on one pool of max 10 for `duration` seconds. */
async function ceiling(database, sql, loops, duration) {
  const pg = require('pg');
  const { sslMode: _sslMode, ...connection } = targetOf(database);
  const pool = new pg.Pool({ ...connection, ssl: false, max: 10 });
  const loopUntil = async (until, onDone = () => undefined) => {
    while (performance.now() < until) {
      await pool.query(sql);
      onDone();
    }
  };
  try {
    const warmUntil = performance.now() + 500;
    await Promise.all(Array.from({ length: loops }, () => loopUntil(warmUntil)));
    let done = 0;
    const started = performance.now();
    const until = started + duration * 1000;
    await Promise.all(Array.from({ length: loops }, () => loopUntil(until, () => done++)));
    return done / ((performance.now() - started) / 1000);
  } finally {
    await pool.end();
  }
}

async function measureCeilings(database) {
  const ceilings = [];
  for (const [label, workloadId, sql] of [
    ['SELECT 1', 'select1', 'SELECT 1 AS one'],
    ['100-row SELECT', 'rows100', BENCH_T_SQL],
  ]) {
    for (const loops of SETTINGS.connections) {
      const qps = await ceiling(database, sql, loops, SETTINGS.durationS);
      ceilings.push({ label, workloadId, loops, qps });
      log(`raw pg ${label}, ${loops} loops: ${fmt(qps)} queries/s`);
    }
  }
  return ceilings;
}

// ---------------------------------------------------------------------------------------------

await runMain(async () => {
  const loadAtStart = os.loadavg();
  log('starting PostgreSQL…');
  const database = await startDatabase();
  const client = await connectClient(database);
  const facts = await machineFacts(client);
  await prepareBenchTables(client);
  await client.end();
  log(`PostgreSQL (${database.source}) on ${database.host}:${database.port}`);

  const target = targetOf(database);
  const probe = await probeSqlgate(target);
  log(
    `captured sqlgate's cached SELECT 1 answer (${probe.cannedRaw.length} bytes); ` +
      `3 × pg_sleep(0.2): median ${probe.sleep.median.toFixed(0)} ms`,
  );
  const context = { target, ...probe };

  const rows = [];
  const syscalls = [];
  for (const workload of WORKLOADS) {
    const measured = await measureWorkload(workload, context);
    rows.push(...measured.rows);
    syscalls.push(...measured.syscalls);
  }
  const ceilings = await measureCeilings(database);

  const report = {
    settings: SETTINGS,
    servers: SERVERS,
    workloads: WORKLOADS,
    sqlgateEnv: SQLGATE_ENV,
    facts,
    databaseSource: database.source,
    loadAtStart,
    loadAtEnd: os.loadavg(),
    rows,
    syscalls,
    ceilings,
    sleep: probe.sleep,
    cannedBytes: probe.cannedRaw.length,
    totalSeconds: (performance.now() - benchStarted) / 1000,
  };
  printReport(report);
  await writeReport(report);
  log('wrote docs/benchmarks.md');
});
