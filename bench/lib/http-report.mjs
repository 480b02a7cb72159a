// The report of bench/http.mjs: tables for the terminal and the "HTTP throughput and latency"
// part of docs/benchmarks.md, which comes first; the sections other scripts write are kept.
import {
  cacheSectionOf,
  compareSectionOf,
  layersSectionOf,
  machineLines,
  markdownTable,
  memorySectionOf,
  observabilitySectionOf,
  readDocs,
  streamSectionOf,
  textTable,
  workersSectionOf,
  writeDocs,
} from './harness.mjs';

const fmt = (n, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
const ms = (n) => (Number.isFinite(n) ? `${n.toFixed(n < 10 ? 2 : 1)} ms` : '–');
const us = (n) => (Number.isFinite(n) ? `${fmt(n)} µs` : '–');
const ratioText = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');
const shortLabel = (workload) => workload.short ?? workload.label;

/**
 * The comparisons the bench is for, each a ratio of medians of the same block of alternated
 * rounds. `target` is the floor sqlgate aims at on its default configuration, `warnTarget` with
 * `LOG_LEVEL=warn` (the goals of its speed work).
 */
const HEADLINES = [
  {
    workload: 'select1',
    other: 'fast',
    label: 'SELECT 1 vs the fast peer',
    target: 0.9,
    warnTarget: 1.0,
  },
  { workload: 'rows100', other: 'fast', label: '100-row SELECT vs the fast peer', target: 1.75 },
  {
    workload: 'cached',
    other: 'fast',
    label: "cached SELECT 1 vs the fast peer's uncached SELECT 1",
    target: 1.5,
  },
  {
    workload: 'cached',
    other: 'canned',
    label: 'cached SELECT 1 vs bare node:http sending the same bytes',
    target: 0.4,
  },
];

/** `≥ 0.90×: PASS` for a ratio against its floor; nothing without one. */
const verdictOf = (ratio, target) =>
  target === undefined
    ? undefined
    : `≥ ${target.toFixed(2)}×: ${ratio >= target ? 'PASS' : 'FAIL'}`;

const findRow = (report, workloadId, connections) =>
  report.rows.find((r) => r.workload.id === workloadId && r.connections === connections);
const serverName = (report, id) => report.servers.find((server) => server.id === id).name;

// ---------------------------------------------------------------------------------------------
// Tables: each a {header, rows, align}.

function headlineTable(report) {
  const rows = HEADLINES.flatMap((headline) =>
    report.settings.connections.map((connections) => {
      const { byServer } = findRow(report, headline.workload, connections);
      const [sqlgate, warn, other] = ['sqlgate', 'sqlgateWarn', headline.other].map(
        (id) => byServer[id],
      );
      const ratio = sqlgate.reqPerSec / other.reqPerSec;
      const warnRatio = warn.reqPerSec / other.reqPerSec;
      const verdicts = [
        verdictOf(ratio, headline.target),
        headline.warnTarget === undefined
          ? undefined
          : `warn ${verdictOf(warnRatio, headline.warnTarget)}`,
      ].filter(Boolean);
      return [
        headline.label,
        connections,
        fmt(sqlgate.reqPerSec),
        fmt(warn.reqPerSec),
        fmt(other.reqPerSec),
        ratioText(ratio),
        ratioText(warnRatio),
        us(sqlgate.cpuUsPerReq),
        us(warn.cpuUsPerReq),
        us(other.cpuUsPerReq),
        verdicts.join('; ') || '–',
      ];
    }),
  );
  return {
    header: [
      'comparison',
      'conns',
      'sqlgate req/s',
      'LOG_LEVEL=warn req/s',
      'other req/s',
      'sqlgate / other',
      'warn / other',
      'sqlgate CPU/req',
      'warn CPU/req',
      'other CPU/req',
      'target',
    ],
    rows,
    align: ['l', ...Array(10).fill('r')],
  };
}

/** Every workload, connection count and server: the medians of its runs. */
function resultsTable(report) {
  const rows = report.rows.flatMap(({ workload, connections, byServer }) =>
    report.servers
      .filter((server) => byServer[server.id])
      .map((server) => {
        const result = byServer[server.id];
        return [
          shortLabel(workload),
          connections,
          server.name,
          fmt(result.reqPerSec),
          ms(result.p50),
          ms(result.p99),
          us(result.cpuUsPerReq),
          fmt(result.logBytesPerReq),
          ratioText(result.reqPerSec / byServer.fast.reqPerSec),
        ];
      }),
  );
  return {
    header: [
      'workload',
      'conns',
      'server',
      'req/s',
      'p50',
      'p99',
      'CPU/req',
      'log bytes/req',
      'vs fast peer',
    ],
    rows,
    align: ['l', 'r', 'l', ...Array(6).fill('r')],
  };
}

function everyRunTable(report) {
  const { runs } = report.settings;
  const rows = report.rows.flatMap(({ workload, connections, byServer }) =>
    report.servers
      .filter((server) => byServer[server.id])
      .map((server) => [
        shortLabel(workload),
        connections,
        server.name,
        ...byServer[server.id].runs.flatMap((run) => [
          fmt(run.reqPerSec),
          ms(run.p99),
          us(run.cpuUsPerReq),
        ]),
        fmt(byServer[server.id].best),
      ]),
  );
  return {
    header: [
      'workload',
      'conns',
      'server',
      ...Array.from({ length: runs }, (_, i) => [`round ${i + 1} req/s`, 'p99', 'CPU/req']).flat(),
      'best',
    ],
    rows,
    align: ['l', 'r', 'l', ...Array(3 * runs + 1).fill('r')],
  };
}

function syscallTable(report) {
  const rows = report.syscalls.map(({ workload, server, total, top, failed, bad }) => [
    shortLabel(workload),
    server.name,
    failed ? '–' : fmt(total, 1),
    failed
      ? `strace could not attach: ${failed.replace(/\s+/g, ' ')}`
      : top.map(([name, perRequest]) => `${name} ${fmt(perRequest, 2)}`).join(', ') +
        (bad > 0 ? ` (${bad} failed requests)` : ''),
  ]);
  return {
    header: ['workload', 'server', 'syscalls/req', 'most frequent (per request)'],
    rows,
    align: ['l', 'l', 'r', 'l'],
  };
}

function ceilingTable(report) {
  const ids = ['sqlgate', 'sqlgateWarn', 'fast'];
  const rows = report.ceilings.map((c) => {
    const { byServer } = findRow(report, c.workloadId, c.loops);
    return [c.label, c.loops, fmt(c.qps), ...ids.map((id) => fmt(byServer[id].reqPerSec))];
  });
  return {
    header: [
      'query',
      'concurrent loops',
      'queries/s',
      ...ids.map((id) => `${serverName(report, id)} req/s`),
    ],
    rows,
    align: ['l', ...Array(2 + ids.length).fill('r')],
  };
}

function fastPeerTable(report) {
  return {
    header: ['workload', 'fast peer gets'],
    rows: report.workloads.map((w) => [
      shortLabel(w),
      w.fast ? (w.fastNote ?? 'the same request as sqlgate') : 'skipped',
    ]),
    align: [],
  };
}

const markdown = ({ header, rows, align }) => markdownTable(header, rows, align);
const text = ({ header, rows, align }) => textTable(header, rows, align);

// ---------------------------------------------------------------------------------------------
// Prose.

const sleepSentence = ({ sleep, settings }) =>
  `Three \`SELECT pg_sleep(0.2)\` in one request (sqlgate's parallel reads): min ${ms(sleep.min)}, median ${ms(sleep.median)} over ${settings.sleepRequests} requests (the first, unmeasured: ${ms(sleep.cold)}); target < 300 ms: ${sleep.median < 300 ? 'PASS' : 'FAIL'}.`;

function failedRequests(report) {
  const failed = report.rows.flatMap(({ workload, connections, byServer }) =>
    Object.entries(byServer)
      .filter(([, result]) => result.bad > 0)
      .map(([id]) => `${serverName(report, id)} on ${workload.id} at ${connections} connections`),
  );
  return failed.length
    ? `Non-2xx responses or errors occurred: ${failed.join(', ')}.`
    : 'Every measured request answered 2xx.';
}

function methodLines(report) {
  const { settings, sqlgateEnv } = report;
  const env = Object.entries(sqlgateEnv)
    .map(([name, value]) => `\`${name}=${value}\``)
    .join(' ');
  return [
    `- PostgreSQL: a throwaway local cluster from \`@sqlgate/testing\` (source: ${report.databaseSource}); durability off; every server connects without TLS.`,
    `- sqlgate: the \`sqlgate\` command (\`node apps/http-express/dist/bin.js\`) in its own process, with no environment but \`PORT\` (a free port), \`HOSTNAME=127.0.0.1\` and ${env} (the fast peer's pool size and the default row limit): its default configuration, so logging at \`info\` (a line per request) and metrics on. Its standard output is a pipe the bench reads and discards, as a log collector would ("log bytes/req" is what came through it).`,
    `- sqlgate LOG_LEVEL=warn: the same with \`LOG_LEVEL=warn\` (no line per request).`,
    '- fast peer: node:http + postgres.js (`postgres` 3, `bench/servers/fast-server.mjs`), the speed to beat: one postgres.js pool (max 10) per host:port:user:database, `sql.unsafe(sql)` (without parameters postgres.js sends a simple query), `JSON.stringify({rows, fields, rowCount, command, executionTime, statement})`; no validation, splitting, limits or logging. It answers one statement per request: for the multi-statement workloads it gets the closest equivalent (see the table below); for the cached read it runs the uncached `SELECT 1`.',
    `- bare node:http, canned bytes (\`bench/servers/canned-server.mjs\`), in the cached block only: it reads each request to its end and answers with the ${report.cannedBytes} bytes sqlgate sent for a cached \`SELECT 1\` (captured at the start of the bench; its headers written by node:http, as sqlgate's are, and checked byte for byte but the Date), computing nothing: the floor under a cached read.`,
    `- fresh processes per workload: each workload starts its servers, checks one answer of each, runs each ${settings.firstWarmupS} s at 10 connections, then for each connection count a ${settings.warmupS} s warm-up of each and ${settings.runs} rounds of ${settings.durationS} s runs, the order of the servers rotating by one each round; then it stops them.`,
    '- load: autocannon 8 in the bench process, one request body per workload, pipelining 1. req/s is 2xx responses / run duration; every figure is the median of the rounds (autocannon reports whole milliseconds of latency). Ratios are ratios of medians of the same block.',
    '- workloads: `SELECT 1 AS one`; `SELECT id, name, score, created_at FROM bench_t ORDER BY id` (100 rows of int, text, float8, timestamptz); three `SELECT … FROM bench_t WHERE id < 30` in one request (sqlgate: its parallel-read path, docs/decisions.md 10.29); `INSERT; UPDATE; INSERT; DELETE; SELECT` on `bench_w` (sqlgate wraps them in one transaction); `SELECT 1 AS one` with `cache: true` (served from the result cache after the check).',
    '- CPU/req: user + system CPU time of the server process during the run (`/proc/<pid>/stat`, clock ticks) divided by its responses; it depends far less on other work on the machine than req/s does.',
    `- syscalls/req: \`strace -c -f -p <pid>\` attached to the server process (every thread) after the rounds of its block, while autocannon sends ${fmt(settings.straceRequests)} requests at ${settings.straceConnections} connections, then stopped; its count of calls divided by the requests. strace slows the server several times over, so writes may gather differently than at full speed.`,
    `- ceiling: the raw pg driver in the bench process, one \`pg.Pool\` (max 10), N concurrent loops of \`pool.query(sql)\` for ${settings.durationS} s after a 0.5 s warm-up.`,
    `- \`bench/http.mjs\` took ${fmt(report.totalSeconds)} s of the whole \`npm run bench\`.`,
  ];
}

/** Observations computed from this run. */
function readingLines(report) {
  const select1 = findRow(report, 'select1', 10).byServer;
  const cached = findRow(report, 'cached', 10).byServer;
  const rawSelect1 = report.ceilings.find((c) => c.workloadId === 'select1' && c.loops === 10);
  return [
    `- Logging at \`info\`: at 10 connections \`SELECT 1\` runs at ${ratioText(select1.sqlgate.reqPerSec / select1.sqlgateWarn.reqPerSec)} the rate of \`LOG_LEVEL=warn\`, ${us(select1.sqlgate.cpuUsPerReq)} against ${us(select1.sqlgateWarn.cpuUsPerReq)} of CPU per request, for ${fmt(select1.sqlgate.logBytesPerReq)} bytes of log per request.`,
    `- The floor of a cached read: node:http alone spends ${us(cached.canned.cpuUsPerReq)} of CPU to receive a request and send the same ${report.cannedBytes} bytes; sqlgate spends ${us(cached.sqlgate.cpuUsPerReq)} (${us(cached.sqlgateWarn.cpuUsPerReq)} at \`LOG_LEVEL=warn\`).`,
    `- The raw driver runs ${fmt(rawSelect1.qps)} \`SELECT 1\`/s with 10 loops, ${ratioText(rawSelect1.qps / select1.fast.reqPerSec)} what the fast peer serves over HTTP: with the load generator and PostgreSQL on the same cores, HTTP, JSON and the load generator bound the rate, and CPU per request is what decides it.`,
    '- Rates of one server drift between blocks measured minutes apart (other work on the machine, fresh processes); compare servers within a block, where rounds alternate.',
  ];
}

// ---------------------------------------------------------------------------------------------

/** The tables on the terminal. */
export function printReport(report) {
  for (const table of [
    headlineTable(report),
    resultsTable(report),
    syscallTable(report),
    ceilingTable(report),
  ]) {
    console.log(`\n${text(table)}`);
  }
  console.log(`\n${sleepSentence(report)}`);
  console.log(failedRequests(report));
  console.log(`\nbench/http.mjs took ${fmt(report.totalSeconds)} s`);
}

/** Writes docs/benchmarks.md: this run's section, then the sections other scripts wrote. */
export async function writeReport(report) {
  const { settings } = report;
  const loads = (values) => values.map((l) => l.toFixed(2)).join(', ');
  const doc = [
    '# Benchmarks',
    '',
    '## HTTP throughput and latency',
    '',
    `Measured ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npm run bench\` (\`bench/http.mjs\`): the \`sqlgate\` command at its default configuration and with \`LOG_LEVEL=warn\`, the fast peer, and for the cached read a bare node:http server sending sqlgate's answer bytes; medians of ${settings.runs} alternated rounds, fresh processes per workload.`,
    '',
    '### Machine',
    '',
    ...machineLines(report.facts),
    `- load average (1, 5, 15 min) at the start ${loads(report.loadAtStart)}, at the end ${loads(report.loadAtEnd)}: a shared machine, where other work competes for both cores — single runs vary by tens of per cent, p99 most of all`,
    '',
    '### Method',
    '',
    ...methodLines(report),
    '',
    `### Headline (medians of ${settings.runs} alternated rounds)`,
    '',
    '"other" is the server named in the comparison; "warn" is sqlgate with `LOG_LEVEL=warn`.',
    '',
    markdown(headlineTable(report)),
    '',
    sleepSentence(report),
    '',
    `### Every workload and server (medians of ${settings.runs} rounds)`,
    '',
    markdown(resultsTable(report)),
    '',
    failedRequests(report),
    '',
    'What the fast peer runs for each workload:',
    '',
    markdown(fastPeerTable(report)),
    '',
    '### System calls per request',
    '',
    markdown(syscallTable(report)),
    '',
    '### Every round',
    '',
    markdown(everyRunTable(report)),
    '',
    '### Ceiling: the raw pg driver',
    '',
    markdown(ceilingTable(report)),
    '',
    '### Reading the results',
    '',
    ...readingLines(report),
    '',
  ];
  const current = readDocs();
  const kept = [
    compareSectionOf,
    layersSectionOf,
    memorySectionOf,
    streamSectionOf,
    observabilitySectionOf,
    cacheSectionOf,
    workersSectionOf,
  ]
    .map((sectionOf) => sectionOf(current))
    .filter(Boolean);
  await writeDocs([...doc, ...kept.flatMap((section) => [section, ''])].join('\n'));
}
