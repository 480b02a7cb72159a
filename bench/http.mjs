// HTTP throughput and latency of sqlgate against the fast peer (node:http + postgres.js, the speed
// to beat) and a bare Express 5 + pg baseline, with the raw pg driver as the ceiling. npm run bench
// (builds first). The three servers run in their own child processes; autocannon drives them from
// this one, alternating sqlgate / fast peer / baseline BENCH_RUNS times (default 3) per workload
// and connection count, with the CPU each server process spends per request. Writes
// docs/benchmarks.md (keeping the memory section).
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import {
  connectClient,
  machineFacts,
  machineLines,
  markdownTable,
  median,
  cacheSectionOf,
  compareSectionOf,
  layersSectionOf,
  workersSectionOf,
  memorySectionOf,
  observabilitySectionOf,
  streamSectionOf,
  postJson,
  readDocs,
  require,
  runMain,
  startDatabase,
  startServerProcess,
  textTable,
  writeDocs,
  load,
} from './lib/harness.mjs';
import { BEFORE } from './lib/before-speed-v2.mjs';
import { BENCH_T_SQL, prepareBenchTables, SIDES, SIDE_NAMES, WORKLOADS } from './lib/workloads.mjs';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 1);
const CONNECTIONS = [10, 50];
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const FIRST_WARMUP_S = 3;
const SLEEP_REQUESTS = 5;

const fmt = (n, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
const ms = (n) => (Number.isFinite(n) ? `${n.toFixed(n < 10 ? 2 : 1)} ms` : '–');
const ratioText = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');

/** A server's runs of one workload and connection count: medians, and its best run. */
const summarize = (runs) => ({
  reqPerSec: median(runs.map((r) => r.reqPerSec)),
  best: Math.max(...runs.map((r) => r.reqPerSec)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  cpuUsPerReq: median(runs.map((r) => r.cpuUsPerReq)),
  bad: runs.reduce((sum, r) => sum + r.bad, 0),
});
const SKIPPED = { reqPerSec: NaN, best: NaN, p50: NaN, p99: NaN, cpuUsPerReq: NaN, bad: 0 };

/** N concurrent loops of pool.query(sql) on one pool of max 10 for `duration` seconds. */
async function ceiling(database, sql, loops, duration) {
  const pg = require('pg');
  const pool = new pg.Pool({
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    ssl: false,
    max: 10,
  });
  try {
    const warmUntil = performance.now() + 500;
    await Promise.all(
      Array.from({ length: loops }, async () => {
        while (performance.now() < warmUntil) await pool.query(sql);
      }),
    );
    let done = 0;
    const started = performance.now();
    const until = started + duration * 1000;
    await Promise.all(
      Array.from({ length: loops }, async () => {
        while (performance.now() < until) {
          await pool.query(sql);
          done++;
        }
      }),
    );
    return done / ((performance.now() - started) / 1000);
  } finally {
    await pool.end();
  }
}

async function verify(workload, servers, targetOf) {
  for (const side of SIDES.filter((s) => workload[s])) {
    const url = servers[side].url;
    const body = { ...targetOf[side], ...workload[side] };
    const check = (side === 'fast' && workload.fastCheck) || workload.check;
    const extra = side === 'sqlgate' ? workload.sqlgateCheck : undefined;
    // Twice: the second answer of a cached read must come from the cache.
    await postJson(`${url}/api/query`, body);
    const { status, json } = await postJson(`${url}/api/query`, body);
    if (status !== 200 || !json || !check(json) || (extra && !extra(json))) {
      throw new Error(
        `${SIDE_NAMES[side]} answered ${workload.label} unexpectedly: ${status} ${JSON.stringify(json).slice(0, 400)}`,
      );
    }
  }
}

async function sleepWallTimes(url, target, sql, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const { status, json, ms: elapsed } = await postJson(`${url}/api/query`, { ...target, sql });
    if (status !== 200)
      throw new Error(`pg_sleep request failed: ${status} ${JSON.stringify(json).slice(0, 300)}`);
    times.push(elapsed);
  }
  return times;
}

await runMain(async () => {
  const benchStarted = performance.now();
  const loadAtStart = os.loadavg();
  const log = (line) =>
    console.log(
      `[${((performance.now() - benchStarted) / 1000).toFixed(0).padStart(4)} s] ${line}`,
    );

  log('starting PostgreSQL…');
  const database = await startDatabase();
  const client = await connectClient(database);
  const facts = await machineFacts(client);
  await prepareBenchTables(client);
  await client.end();
  log(
    `PostgreSQL (${database.source}) on ${database.host}:${database.port}${database.directory ? ` in ${database.directory}` : ''}`,
  );

  const [sqlgate, fast, baseline] = await Promise.all([
    startServerProcess('sqlgate-server.mjs', { name: 'sqlgate' }),
    startServerProcess('fast-server.mjs', { name: 'fast peer' }),
    startServerProcess('baseline-server.mjs', { name: 'baseline' }),
  ]);
  const servers = { sqlgate, fast, baseline };
  log(
    SIDES.map((side) => `${SIDE_NAMES[side]} ${servers[side].url} (pid ${servers[side].pid})`).join(
      ', ',
    ),
  );

  const connection = {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
  };
  const targetOf = {
    sqlgate: { ...connection, sslMode: 'disable' },
    fast: connection,
    baseline: connection,
  };
  const sqlgateTarget = targetOf.sqlgate;
  const baselineTarget = targetOf.baseline;

  for (const workload of WORKLOADS) await verify(workload, servers, targetOf);
  log('every workload answers correctly on all three servers');
  for (const workload of WORKLOADS.filter((w) => w.fastNote || !w.fast)) {
    log(`fast peer, ${workload.id}: ${workload.fast ? workload.fastNote : 'skipped'}`);
  }

  // Every process gets its JIT and pools in place before anything is measured.
  for (const side of SIDES) {
    await load(servers[side], { ...targetOf[side], sql: 'SELECT 1 AS one' }, 10, FIRST_WARMUP_S);
  }

  // Alternating runs: a warm-up of each, then rounds of sqlgate, fast peer, baseline.
  const results = [];
  for (const workload of WORKLOADS) {
    for (const connections of CONNECTIONS) {
      const sides = SIDES.filter((side) => workload[side]);
      const bodies = Object.fromEntries(
        sides.map((side) => [side, { ...targetOf[side], ...workload[side] }]),
      );
      for (const side of sides) await load(servers[side], bodies[side], connections, WARMUP_S);
      const runs = Object.fromEntries(sides.map((side) => [side, []]));
      for (let run = 0; run < RUNS; run++) {
        for (const side of sides) {
          runs[side].push(await load(servers[side], bodies[side], connections, DURATION_S));
        }
      }
      const row = { workload, connections, runs };
      for (const side of SIDES) {
        row[side] = runs[side] ? summarize(runs[side]) : SKIPPED;
      }
      row.ratio = row.sqlgate.reqPerSec / row.baseline.reqPerSec;
      row.bestRatio = row.sqlgate.best / row.baseline.best;
      row.fastRatio = row.sqlgate.reqPerSec / row.fast.reqPerSec;
      row.fastBestRatio = row.sqlgate.best / row.fast.best;
      results.push(row);
      log(
        `${workload.id} c=${connections}: ` +
          sides
            .map(
              (side) =>
                `${SIDE_NAMES[side]} ${runs[side].map((r) => fmt(r.reqPerSec)).join(' / ')} req/s ` +
                `(${fmt(row[side].cpuUsPerReq)} µs CPU/req)`,
            )
            .join(', ') +
          `; sqlgate/fast peer ${ratioText(row.fastRatio)}, sqlgate/baseline ${ratioText(row.ratio)}`,
      );
    }
  }

  // Three 0.2 s sleeps in one request: the parallel path should take ~0.2 s, not 0.6 s.
  const sleepSql = ['SELECT pg_sleep(0.2)', 'SELECT pg_sleep(0.2)', 'SELECT pg_sleep(0.2)'].join(
    ';\n',
  );
  const [sleepCold, ...sleepTimes] = await sleepWallTimes(
    sqlgate.url,
    sqlgateTarget,
    sleepSql,
    SLEEP_REQUESTS + 1,
  );
  const baselineSleep = await sleepWallTimes(baseline.url, baselineTarget, sleepSql, 3);
  const sleep = {
    cold: sleepCold,
    min: Math.min(...sleepTimes),
    median: median(sleepTimes),
    baselineMedian: median(baselineSleep),
  };
  log(
    `3 × pg_sleep(0.2): sqlgate min ${ms(sleep.min)}, median ${ms(sleep.median)} (first ${ms(sleep.cold)}); baseline median ${ms(sleep.baselineMedian)}`,
  );

  // The raw driver, same concurrency, same pool size, no HTTP.
  const ceilings = [];
  for (const [label, sql] of [
    ['SELECT 1', 'SELECT 1 AS one'],
    ['100-row SELECT', BENCH_T_SQL],
  ]) {
    for (const loops of CONNECTIONS) {
      ceilings.push({ label, loops, qps: await ceiling(database, sql, loops, DURATION_S) });
      log(`raw pg ${label}, ${loops} loops: ${fmt(ceilings.at(-1).qps)} queries/s`);
    }
  }

  await Promise.all(SIDES.map((side) => servers[side].stop()));
  const totalSeconds = (performance.now() - benchStarted) / 1000;

  // ------------------------------------------------------------------------------------------
  // Report.
  const find = (id, connections) =>
    results.find((r) => r.workload.id === id && r.connections === connections);
  const targets = [];
  const target = (name, pass, detail) => targets.push({ name, pass, detail });
  // The targets of speed v2: ratios of medians of the same run.
  for (const [id, what, floor] of [
    ['select1', 'SELECT 1', 1.0],
    ['rows100', '100-row SELECT', 1.5],
  ]) {
    for (const c of CONNECTIONS) {
      const r = find(id, c);
      target(
        `${what} at ${c} connections ≥ ${floor.toFixed(1)}× fast peer`,
        r.fastRatio >= floor,
        `${fmt(r.sqlgate.reqPerSec)} vs ${fmt(r.fast.reqPerSec)} req/s = ${ratioText(r.fastRatio)} (best runs ${ratioText(r.fastBestRatio)}); CPU/req ${fmt(r.sqlgate.cpuUsPerReq)} vs ${fmt(r.fast.cpuUsPerReq)} µs`,
      );
    }
  }
  // The fast peer answers SELECT 1 much more slowly in the cached block, at the end of the run,
  // than in the SELECT 1 block at its start (it was so before sqlgate's speed work too): the
  // cached read is judged against its faster figure, the SELECT 1 block's.
  for (const c of CONNECTIONS) {
    const cached = find('cached', c);
    const fastSelect1 = find('select1', c).fast;
    const ratio = cached.sqlgate.reqPerSec / fastSelect1.reqPerSec;
    target(
      `cached read at ${c} connections ≥ 2.0× the fast peer's uncached SELECT 1 (its SELECT 1 block)`,
      ratio >= 2.0,
      `${fmt(cached.sqlgate.reqPerSec)} vs ${fmt(fastSelect1.reqPerSec)} req/s = ${ratioText(ratio)}; in the cached block the fast peer served ${fmt(cached.fast.reqPerSec)} req/s (${ratioText(cached.fastRatio)}); CPU/req ${fmt(cached.sqlgate.cpuUsPerReq)} vs ${fmt(fastSelect1.cpuUsPerReq)} µs`,
    );
  }
  for (const c of CONNECTIONS) {
    const r = find('reads3', c);
    target(
      `3 reads in one request at ${c} connections ≥ 1.0× baseline`,
      r.ratio >= 1.0,
      `${fmt(r.sqlgate.reqPerSec)} vs ${fmt(r.baseline.reqPerSec)} req/s = ${ratioText(r.ratio)} (best runs ${ratioText(r.bestRatio)})`,
    );
  }
  for (const c of CONNECTIONS) {
    const r = find('select1', c);
    target(
      `SELECT 1 at ${c} connections ≥ 1.0× baseline`,
      r.ratio >= 1.0,
      `${r.ratio.toFixed(2)}× (best runs ${r.bestRatio.toFixed(2)}×)`,
    );
  }
  for (const c of CONNECTIONS) {
    const r = find('rows100', c);
    target(
      `100-row SELECT at ${c} connections ≥ 1.2× baseline`,
      r.ratio >= 1.2,
      `${r.ratio.toFixed(2)}× (best runs ${r.bestRatio.toFixed(2)}×)`,
    );
  }
  for (const c of CONNECTIONS) {
    const r = find('cached', c);
    target(
      `cached read at ${c} connections ≥ 2× baseline's uncached SELECT 1`,
      r.ratio >= 2.0,
      `${fmt(r.sqlgate.reqPerSec)} vs ${fmt(r.baseline.reqPerSec)} req/s = ${r.ratio.toFixed(2)}×`,
    );
  }
  target(
    'three pg_sleep(0.2) reads in one request < 0.3 s (median)',
    sleep.median < 300,
    `min ${ms(sleep.min)}, median ${ms(sleep.median)} of ${SLEEP_REQUESTS}`,
  );
  for (const r of results.filter((x) => x.connections === 50)) {
    target(
      `p99 at 50 connections ≤ baseline: ${r.workload.short ?? r.workload.label}`,
      r.sqlgate.p99 <= r.baseline.p99,
      `${ms(r.sqlgate.p99)} vs ${ms(r.baseline.p99)}`,
    );
  }
  const failures = results.filter((r) => SIDES.some((side) => r[side].bad > 0));

  const header = [
    'workload',
    'conns',
    ...SIDES.flatMap((side) => [`${SIDE_NAMES[side]} req/s`, 'p50', 'p99', 'CPU/req']),
    'sqlgate/fast peer',
    'best/best',
    'sqlgate/baseline',
    'best/best',
  ];
  const align = ['l', 'r', ...Array(4 * SIDES.length + 4).fill('r')];
  const us = (n) => (Number.isFinite(n) ? `${fmt(n)} µs` : '–');
  const summaryRows = results.map((r) => [
    r.workload.short ?? r.workload.label,
    r.connections,
    ...SIDES.flatMap((side) => [
      fmt(r[side].reqPerSec),
      ms(r[side].p50),
      ms(r[side].p99),
      us(r[side].cpuUsPerReq),
    ]),
    ratioText(r.fastRatio),
    ratioText(r.fastBestRatio),
    ratioText(r.ratio),
    ratioText(r.bestRatio),
  ]);
  // The headline: throughput ratios and CPU per request side by side.
  const ratioHeader = [
    'workload',
    'conns',
    'sqlgate/fast peer',
    '(before)',
    'sqlgate/baseline',
    '(before)',
    ...SIDES.map((side) => `${SIDE_NAMES[side]} CPU/req`),
    'sqlgate CPU/req before',
  ];
  const ratioAlign = ['l', ...Array(6 + SIDES.length).fill('r')];
  const ratioRows = results.map((r) => {
    const before = BEFORE.workloads[r.workload.id]?.[r.connections];
    return [
      r.workload.short ?? r.workload.label,
      r.connections,
      ratioText(r.fastRatio),
      ratioText(before?.fast),
      ratioText(r.ratio),
      ratioText(before?.baseline),
      ...SIDES.map((side) => us(r[side].cpuUsPerReq)),
      us(before?.cpu),
    ];
  });
  const fastRows = WORKLOADS.map((w) => [
    w.short ?? w.label,
    w.fast ? (w.fastNote ?? 'the same request as sqlgate') : 'skipped',
  ]);
  const runHeader = [
    'workload',
    'conns',
    'server',
    ...Array.from({ length: RUNS }, (_, i) => [`run ${i + 1} req/s`, 'p50', 'p99', 'CPU']).flat(),
    'best',
  ];
  const runAlign = ['l', 'r', 'l', ...Array(4 * RUNS + 1).fill('r')];
  const runRows = results.flatMap((r) =>
    SIDES.filter((side) => r.runs[side]).map((side) => [
      r.workload.short ?? r.workload.label,
      r.connections,
      SIDE_NAMES[side],
      ...r.runs[side].flatMap((run) => [
        fmt(run.reqPerSec),
        ms(run.p50),
        ms(run.p99),
        Number.isFinite(run.cpuShare) ? `${(run.cpuShare * 100).toFixed(0)} %` : '–',
      ]),
      fmt(r[side].best),
    ]),
  );
  const ceilingHeader = [
    'query',
    'concurrent loops',
    'queries/s',
    ...SIDES.map((side) => `${SIDE_NAMES[side]} req/s`),
  ];
  const ceilingAlign = ['l', ...Array(2 + SIDES.length).fill('r')];
  const ceilingRows = ceilings.map((c) => {
    const r = find(c.label === 'SELECT 1' ? 'select1' : 'rows100', c.loops);
    return [c.label, c.loops, fmt(c.qps), ...SIDES.map((side) => fmt(r[side].reqPerSec))];
  });
  const targetRows = targets.map((t) => [t.pass ? 'PASS' : 'FAIL', t.name, t.detail]);

  console.log('');
  console.log(textTable(['workload', 'fast peer gets'], fastRows));
  console.log('');
  console.log(textTable(ratioHeader, ratioRows, ratioAlign));
  console.log('');
  console.log(textTable(header, summaryRows, align));
  console.log('');
  console.log(textTable(runHeader, runRows, runAlign));
  console.log('');
  console.log(textTable(ceilingHeader, ceilingRows, ceilingAlign));
  console.log('');
  console.log(
    `3 × pg_sleep(0.2) in one request: sqlgate min ${ms(sleep.min)}, median ${ms(sleep.median)} (first request ${ms(sleep.cold)}); baseline (sequential) median ${ms(sleep.baselineMedian)}`,
  );
  console.log('');
  console.log(textTable(['', 'target', 'measured'], targetRows));
  if (failures.length) {
    console.log(
      `\nnon-2xx responses or errors in: ${failures.map((r) => `${r.workload.id}@${r.connections}`).join(', ')}`,
    );
  }
  console.log(`\ntotal bench time ${totalSeconds.toFixed(0)} s`);

  const select1 = find('select1', 10);
  const rawSelect1 = ceilings.find((c) => c.label === 'SELECT 1' && c.loops === 10);
  const cached = find('cached', 10);
  const notes = [
    `- The raw driver runs ${fmt(rawSelect1.qps)} \`SELECT 1\`/s with 10 loops, ${(rawSelect1.qps / select1.baseline.reqPerSec).toFixed(1)}× what the baseline serves over HTTP: on this machine HTTP, JSON and the load generator, which share the two cores with PostgreSQL, bound the throughput, not the database round trip. A cache hit saves only the round trip, so it cannot double a rate that the HTTP layer bounds.`,
    `- Server CPU per request at 10 connections: \`SELECT 1\` sqlgate ${us(select1.sqlgate.cpuUsPerReq)} vs fast peer ${us(select1.fast.cpuUsPerReq)} vs baseline ${us(select1.baseline.cpuUsPerReq)}; cached \`SELECT 1\` sqlgate ${us(cached.sqlgate.cpuUsPerReq)}. With the load generator and PostgreSQL on the same two cores, CPU per request is what decides throughput: sqlgate serves ${ratioText(select1.fastRatio)} the fast peer's \`SELECT 1\` rate.`,
    `- Rates of the same server and workload drift between blocks measured minutes apart (other work on the machine); compare the two sides within a row, where runs alternate.`,
  ];

  const now = new Date();
  const doc = [
    '# Benchmarks',
    '',
    '## HTTP throughput and latency',
    '',
    `Measured ${now.toISOString().replace(/\.\d+Z$/, 'Z')} with \`npm run bench\` (\`bench/http.mjs\`).`,
    '',
    '### Machine',
    '',
    ...machineLines(facts),
    `- load average (1, 5, 15 min) at the start ${loadAtStart.map((l) => l.toFixed(2)).join(', ')}, at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ', ',
      )}: a shared machine, where other work competes for both cores — single runs vary by tens of per cent, p99 most of all`,
    '',
    '### Method',
    '',
    `- PostgreSQL: a throwaway local cluster from \`@sqlgate/testing\` (source: ${database.source}); durability off; both servers connect without TLS (sqlgate \`sslMode: "disable"\`, the baseline \`ssl: false\`).`,
    '- sqlgate: the built `@sqlgate/http-express` server (`startServer`, default configuration: `POOL_MAX` 10, logging off) in its own Node.js process (`bench/servers/sqlgate-server.mjs`).',
    '- fast peer: node:http + postgres.js (`postgres` 3, `bench/servers/fast-server.mjs`), the speed to beat: one postgres.js pool (max 10) per host:port:user:database, `sql.unsafe(sql)` (without parameters postgres.js sends a simple query), `JSON.stringify({rows, fields, rowCount, command, executionTime, statement})`; no validation, splitting or limits. It answers one statement per request: for the multi-statement workloads it gets the closest equivalent, the same statements as one simple query, whose results come back together (the three reads as the baseline gets them; the five writes without `BEGIN`/`COMMIT`, which postgres.js refuses on a pool, so in the implicit transaction PostgreSQL gives a multi-statement simple query); for the cached read it runs the uncached `SELECT 1` (see the table below).',
    '- baseline: a bare Express 5 + pg server in its own process (`bench/servers/baseline-server.mjs`): one `pg.Pool` (max 10) per host:port:user:database, `express.json()`, `POST /api/query` → `pool.query(sql)` → `res.json({rows, fields, rowCount, command})`. Several statements are sent as one simple query; the write transaction as `BEGIN; …; COMMIT`.',
    `- load: autocannon 8 in the bench process, one request body per workload, pipelining 1. First ${FIRST_WARMUP_S} s of \`SELECT 1\` at 10 connections on each server; then for each workload and connection count: a ${WARMUP_S} s warm-up of each server, then ${RUNS} rounds of ${DURATION_S} s runs alternating sqlgate, fast peer, baseline. req/s is 2xx responses / run duration; the summary gives the median of the runs (p50/p99 and CPU/req likewise; autocannon reports whole milliseconds), the per-run table every run. "sqlgate/fast peer" and "sqlgate/baseline" are ratios of the medians (the targets are judged on them), "best/best" the ratio of each side's best run — other work on the machine only ever slows a run down, so the best runs are the less disturbed estimate.`,
    "- workloads: `SELECT 1 AS one`; `SELECT id, name, score, created_at FROM bench_t ORDER BY id` (100 rows of int, text, float8, timestamptz); three `SELECT … FROM bench_t WHERE id < 30` in one request (sqlgate: its parallel-read path, each read on its own connection in a READ ONLY transaction when the pool has one free for each, otherwise in turn on one connection, each in its own READ ONLY transaction, docs/decisions.md 10.29); `INSERT; UPDATE; INSERT; DELETE; SELECT` on `bench_w` (sqlgate wraps them in one transaction); `SELECT 1 AS one` with `cache: true` (served from the result cache after the warm-up) against the baseline's uncached `SELECT 1 AS one`.",
    '- CPU/req: user + system CPU time of the server process during the run (`/proc/<pid>/stat`, clock ticks) divided by its responses; it depends far less on other work on the machine than req/s does. CPU in the per-run table is the share of one core the server process used.',
    `- 3 × \`pg_sleep(0.2)\`: one request holding three \`SELECT pg_sleep(0.2)\`, sent ${SLEEP_REQUESTS} times in sequence after one unmeasured request; wall time at the client.`,
    `- ceiling: the raw pg driver in the bench process, one \`pg.Pool\` (max 10), N concurrent loops of \`pool.query(sql)\` for ${DURATION_S} s after a 0.5 s warm-up.`,
    `- the whole bench took ${totalSeconds.toFixed(0)} s.`,
    '',
    `### Ratios and CPU per request (medians of ${RUNS} alternated runs)`,
    '',
    `"(before)" and "sqlgate CPU/req before" are the figures of the run of ${BEFORE.measured} (commit ${BEFORE.commit}, ${BEFORE.machine}), before the speed work of docs/decisions.md 10.29 and 10.30; CPU figures compare only on the same kind of machine.`,
    '',
    markdownTable(ratioHeader, ratioRows, ratioAlign),
    '',
    'What the fast peer runs for each workload:',
    '',
    markdownTable(['workload', 'fast peer gets'], fastRows),
    '',
    `### Results (median of ${RUNS} runs)`,
    '',
    markdownTable(header, summaryRows, align),
    '',
    '### Every run',
    '',
    markdownTable(runHeader, runRows, runAlign),
    '',
    '### Ceiling: the raw pg driver',
    '',
    markdownTable(ceilingHeader, ceilingRows, ceilingAlign),
    '',
    '### Three `pg_sleep(0.2)` reads in one request',
    '',
    `sqlgate: min ${ms(sleep.min)}, median ${ms(sleep.median)} over ${SLEEP_REQUESTS} requests (the first, unmeasured request: ${ms(sleep.cold)}). The baseline runs them one after another: median ${ms(sleep.baselineMedian)}.`,
    '',
    '### Targets',
    '',
    markdownTable(['', 'target', 'measured'], targetRows),
    ...(failures.length
      ? [
          '',
          `Non-2xx responses or errors occurred in: ${failures.map((r) => `${r.workload.id} at ${r.connections} connections`).join(', ')}.`,
        ]
      : ['', 'Every measured request answered 2xx.']),
    '',
    '### Reading the results',
    '',
    ...notes,
    '',
  ];
  const kept = [
    compareSectionOf(readDocs()),
    layersSectionOf(readDocs()),
    memorySectionOf(readDocs()),
    streamSectionOf(readDocs()),
    observabilitySectionOf(readDocs()),
    cacheSectionOf(readDocs()),
    workersSectionOf(readDocs()),
  ].filter(Boolean);
  await writeDocs([...doc, ...kept.flatMap((section) => [section, ''])].join('\n'));
  log('wrote docs/benchmarks.md');
});
