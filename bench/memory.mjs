// Peak memory of the sqlgate server process on large results. npm run bench:memory (builds first).
// The server runs in its own child process; for each workload its peak RSS is reset
// (/proc/<pid>/clear_refs), VmRSS is sampled every 20 ms while the request runs, and VmHWM is read
// at the end. Targets: under 256 MB, under 512 MB for 480 rows of 10 MB each (cut at
// MAX_RESULT_BYTES, 64 MiB), and under 2 GB for 12 such answers at once (MAX_RESULT_BYTES_TOTAL).
// Then ten clients that never read their 60 MB answers, and texts given to the SQL parser
// (bench/lib/memory-scenarios.mjs), each against a server of its own. Replaces the memory section
// of docs/benchmarks.md. `--only=scenarios` runs only the latter and writes nothing.
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import {
  connectClient,
  machineFacts,
  machineLines,
  markdownTable,
  memoryOf,
  postJson,
  resetPeak,
  runMain,
  startDatabase,
  startServerProcess,
  textTable,
  writeMemorySection,
  targetOf,
} from './lib/harness.mjs';
import { createBenchRoles, idleClients, parserWorkloads } from './lib/memory-scenarios.mjs';

const TARGET_MB = 256;
const SAMPLE_MS = 20;

const series = 'SELECT generate_series(1, 5000000)';
const wide =
  "SELECT g, md5(g::text) a, md5((g+1)::text) b, md5((g+2)::text) c, repeat('x', 100) d FROM generate_series(1, 200000) g";
const WORKLOADS = [
  {
    label: '5,000,000-row generate_series',
    limits: 'default (MAX_ROWS 10000)',
    body: { sql: series },
  },
  {
    label: '5,000,000-row generate_series',
    limits: 'maxRows 100000',
    body: { sql: series, maxRows: 100_000 },
  },
  {
    label: '200,000-row × 5-column wide SELECT',
    limits: 'default (MAX_ROWS 10000)',
    body: { sql: wide },
  },
  {
    label: '200,000-row × 5-column wide SELECT',
    limits: 'maxRows 100000',
    body: { sql: wide, maxRows: 100_000 },
  },
  {
    label: '480 rows × 10 MB',
    limits: 'default (MAX_RESULT_BYTES 64 MiB)',
    body: { sql: "SELECT repeat('x', 10000000) AS big FROM generate_series(1, 480)" },
    targetMb: 512,
  },
];

/**
 * Many large answers at once (docs/decisions.md 10.2): each request is cut at MAX_RESULT_BYTES,
 * and all of them together at MAX_RESULT_BYTES_TOTAL. Run against the default server and against
 * one whose shared bound is lifted, to show what the bound saves.
 */
const CONCURRENT = {
  label: '12 requests at once, 80 rows × 1 MB each',
  requests: 12,
  body: { sql: "SELECT repeat('x', 1000000) AS big FROM generate_series(1, 80)" },
  targetMb: 2048,
};
const UNBOUNDED_TOTAL = String(Number.MAX_SAFE_INTEGER);

const MB = 1024 * 1024;
const mb = (bytes) => (Number.isFinite(bytes) ? `${(bytes / MB).toFixed(1)} MB` : '–');
const ONLY_SCENARIOS = process.argv.includes('--only=scenarios');

/** The idle clients and parser scenarios, as tables (header, rows, alignment). */
async function runScenarios(database, target) {
  await createBenchRoles(database);
  const idle = [];
  for (const callers of [1, 5]) {
    const result = await idleClients(database, target, { callers });
    console.log(
      `${result.label}: RSS ${mb(result.before)} before, peak ${mb(result.peak)}, ${mb(result.held)} while held; another user's 2 MB read ${result.otherRead}, 12 s later ${result.otherReadAgain}`,
    );
    idle.push(result);
  }
  const parser = await parserWorkloads(target);
  for (const result of parser) {
    console.log(
      `${result.label}: ${result.statuses} in ${result.seconds.toFixed(1)} s, RSS ${mb(result.before)} before, peak ${mb(result.peak)}, ${mb(result.after)} after`,
    );
  }
  return [
    {
      title: 'Ten clients that never read their answers (MAX_RESULT_BYTES_TOTAL 512 MiB)',
      header: [
        'idle sockets',
        'RSS before',
        'peak RSS',
        'RSS while held',
        "another user's 2 MB read",
        'the same 12 s later',
      ],
      align: ['l', 'r', 'r', 'r', 'l', 'l'],
      rows: idle.map((r) => [
        r.label,
        mb(r.before),
        mb(r.peak),
        mb(r.held),
        r.otherRead,
        r.otherReadAgain,
      ]),
    },
    {
      title: 'Texts given to the SQL parser, one request after another',
      header: ['texts', 'statuses', 'time', 'RSS before', 'peak RSS', 'RSS after'],
      align: ['l', 'l', 'r', 'r', 'r', 'r'],
      rows: parser.map((r) => [
        r.label,
        r.statuses,
        `${r.seconds.toFixed(1)} s`,
        mb(r.before),
        mb(r.peak),
        mb(r.after),
      ]),
    },
  ];
}

await runMain(async () => {
  if (process.platform !== 'linux') throw new Error('bench/memory.mjs reads /proc: Linux only');
  const started = performance.now();
  const database = await startDatabase();
  const client = await connectClient(database);
  const facts = await machineFacts(client);
  await client.end();
  if (ONLY_SCENARIOS) {
    for (const table of await runScenarios(database, targetOf(database))) {
      console.log(`\n${table.title}\n${textTable(table.header, table.rows, table.align)}`);
    }
    return;
  }

  const server = await startServerProcess('sqlgate-server.mjs', { name: 'sqlgate' });
  const target = targetOf(database);
  // One small request first: the pool, the parser and JIT are in place before measuring.
  await postJson(`${server.url}/api/query`, { ...target, sql: 'SELECT 1' });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const idle = memoryOf(server.pid);
  console.log(
    `sqlgate pid ${server.pid}, RSS after one small request ${mb(idle.rss)} (peak so far ${mb(idle.hwm)})`,
  );

  let peakResettable = true;
  /** Runs `send` (resolving to the responses) with the peak reset and RSS sampled meanwhile. */
  const measure = async (pid, workload, send) => {
    peakResettable = resetPeak(pid) && peakResettable;
    const before = memoryOf(pid);
    let sampledMax = before.rss;
    const sampler = setInterval(() => {
      try {
        sampledMax = Math.max(sampledMax, memoryOf(pid).rss);
      } catch {
        /* the process is gone: the requests fail below */
      }
    }, SAMPLE_MS);
    const sent = performance.now();
    let responses;
    try {
      responses = await send();
    } finally {
      clearInterval(sampler);
    }
    const after = memoryOf(pid);
    sampledMax = Math.max(sampledMax, after.rss);
    const peak = peakResettable ? after.hwm : sampledMax;
    const jsons = responses.map((response) => response.json ?? {});
    const cut = jsons.filter((json) => json.truncated === true);
    const statuses = [...new Set(responses.map((response) => response.status))];
    const result = {
      ...workload,
      status: statuses.length === 1 ? statuses[0] : statuses.join('/'),
      rows: jsons.reduce((sum, json) => sum + (json.rows?.length ?? 0), 0),
      truncated:
        cut.length === 0
          ? false
          : responses.length === 1
            ? (cut[0].truncatedBy ?? 'yes')
            : `${cut.length} of ${responses.length}, ${cut[0].truncatedBy ?? 'yes'}`,
      error: jsons.find((json) => json.error)?.error,
      bytes: responses.reduce((sum, response) => sum + (response.bytes ?? 0), 0),
      ms: performance.now() - sent,
      before: before.rss,
      sampledMax,
      peak,
      after: after.rss,
    };
    if (result.error) result.error = JSON.stringify(result.error).slice(0, 200);
    console.log(
      `${workload.label}, ${workload.limits}: ${result.status}, ${result.rows} rows${result.truncated ? ` (truncated: ${result.truncated})` : ''}, ` +
        `${mb(result.bytes)} of JSON in ${(result.ms / 1000).toFixed(2)} s; peak RSS ${mb(peak)} (sampled max ${mb(sampledMax)})` +
        (result.error ? `; error ${result.error}` : ''),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return result;
  };
  const post = (url, body) =>
    postJson(`${url}/api/query`, { ...target, ...body }, { timeoutMs: 300_000 });

  const results = [];
  for (const workload of WORKLOADS) {
    results.push(
      await measure(server.pid, workload, async () => [await post(server.url, workload.body)]),
    );
  }
  const concurrently = (url) => () =>
    Promise.all(Array.from({ length: CONCURRENT.requests }, () => post(url, CONCURRENT.body)));
  results.push(
    await measure(
      server.pid,
      { ...CONCURRENT, limits: 'default (MAX_RESULT_BYTES_TOTAL an eighth of the heap)' },
      concurrently(server.url),
    ),
  );
  // The same without the shared bound, in a server of its own: what each request alone allows.
  const unbounded = await startServerProcess('sqlgate-server.mjs', {
    name: 'sqlgate without MAX_RESULT_BYTES_TOTAL',
    env: { MAX_RESULT_BYTES_TOTAL: UNBOUNDED_TOTAL },
  });
  await post(unbounded.url, { sql: 'SELECT 1' });
  const withoutBound = await measure(
    unbounded.pid,
    { ...CONCURRENT, limits: 'MAX_RESULT_BYTES_TOTAL lifted', targetMb: Infinity },
    concurrently(unbounded.url),
  );
  await unbounded.stop();
  const overall = Math.max(...results.map((r) => r.peak), memoryOf(server.pid).hwm);
  await server.stop();
  const scenarios = await runScenarios(database, target);
  const totalSeconds = (performance.now() - started) / 1000;

  const withinTarget = (r) => r.peak < (r.targetMb ?? TARGET_MB) * MB;
  const pass = results.every((r) => r.status === 200 && withinTarget(r));
  const header = [
    'workload',
    'limits',
    'status',
    'rows returned',
    'truncated',
    'response',
    'time',
    'RSS before',
    'peak RSS (VmHWM)',
    'max sampled VmRSS',
  ];
  const align = ['l', 'l', 'r', 'r', 'l', 'r', 'r', 'r', 'r', 'r'];
  const rows = [...results, withoutBound].map((r) => [
    r.label,
    r.limits,
    r.status,
    r.rows.toLocaleString('en-US'),
    r.truncated ? `yes (${r.truncated})` : 'no',
    mb(r.bytes),
    `${(r.ms / 1000).toFixed(2)} s`,
    mb(r.before),
    mb(r.peak),
    mb(r.sampledMax),
  ]);
  const verdict = `${pass ? 'PASS' : 'FAIL'}: peak RSS of the server process ${mb(overall)} (target < ${TARGET_MB} MB, < 512 MB for the 10 MB rows, < ${CONCURRENT.targetMb} MB for ${CONCURRENT.requests} answers at once${results.every((r) => r.status === 200) ? '' : '; some requests failed'})`;

  console.log('');
  console.log(textTable(header, rows, align));
  console.log('');
  console.log(verdict);
  for (const table of scenarios) {
    console.log(`\n${table.title}\n${textTable(table.header, table.rows, table.align)}`);
  }
  console.log(`total memory bench time ${totalSeconds.toFixed(0)} s`);

  await writeMemorySection(
    [
      '## Memory on large results',
      '',
      `Measured ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} with \`npm run bench:memory\` (\`bench/memory.mjs\`).`,
      '',
      ...machineLines(facts),
      '',
      `Method: the built sqlgate server (default configuration, logging off) in its own Node.js process; PostgreSQL from \`@sqlgate/testing\` (${database.source}), \`sslMode: "disable"\`. One small request first (RSS then ${mb(idle.rss)}). Each workload is one request, sent after the previous one finished; before it the process's peak RSS is reset (\`/proc/<pid>/clear_refs\` ← 5${peakResettable ? '' : ' — refused here, so the peak is the sampled maximum'}), VmRSS is sampled every ${SAMPLE_MS} ms while it runs, and VmHWM is read after the response has been received in full. The last workload sends its ${CONCURRENT.requests} requests at once; its last row is the same on a second server with \`MAX_RESULT_BYTES_TOTAL\` lifted (${UNBOUNDED_TOTAL}), not judged: what the shared bound saves.`,
      '',
      markdownTable(header, rows, align),
      '',
      `**${verdict}.**`,
      '',
      'The same server, each scenario in a process of its own: ten raw sockets send their requests at once and never read (RSS while held: 3 s after the last answer began), then another user reads 2 MB, and again 12 s later; texts for the parser go one request after another (docs/decisions.md 10.17, 10.37, 10.38).',
      ...scenarios.flatMap((table) => [
        '',
        `### ${table.title}`,
        '',
        markdownTable(table.header, table.rows, table.align),
      ]),
    ].join('\n'),
  );
  console.log('wrote the memory section of docs/benchmarks.md');
  if (!pass) process.exitCode = 1;
});
