// Streamed answers against psql's own COPY: 5,000,000 rows × 2 columns as NDJSON, CSV and COPY TO
// STDOUT passed through sqlgate, beside `psql -c "COPY (...) TO STDOUT" > /dev/null` on the same
// query, alternated in one run, with the peak RSS of sqlgate's process. npm run bench:stream (builds first). Writes the
// streaming section of docs/benchmarks.md.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import {
  markdownTable,
  median,
  readDocs,
  runMain,
  STREAM_END,
  STREAM_START,
  streamSectionOf,
  startDatabase,
  startServerProcess,
  textTable,
  writeDocs,
} from './lib/harness.mjs';

const ROWS = Number(process.env.STREAM_ROWS ?? 5_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const QUERY = `SELECT g, md5(g::text) FROM generate_series(1, ${ROWS}) g`;
const PAGE_BYTES = 4096;

/** Resident set size of a process, from /proc. */
function rssOf(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
  return Number(fields[1]) * PAGE_BYTES;
}

/** Samples `pid`'s RSS every 20 ms until stopped; the peak. */
function peakRss(pid) {
  let peak = rssOf(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssOf(pid));
  };
}

/** POSTs `sql` with `accept`, reads the whole answer and throws it away. */
function streamThrough(url, target, accept, sql) {
  const body = JSON.stringify({ ...target, sql });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/api/query`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept,
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        let bytes = 0;
        let tail = '';
        response.on('data', (chunk) => {
          bytes += chunk.length;
          tail = chunk.subarray(Math.max(0, chunk.length - 200)).toString();
        });
        response.on('end', () => resolve({ status: response.statusCode, bytes, tail }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function psqlCopy(database) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'psql',
      [
        '-X',
        '-q',
        '-h',
        database.host,
        '-p',
        String(database.port),
        '-U',
        database.user,
        '-d',
        database.database,
        '-c',
        `COPY (${QUERY}) TO STDOUT`,
      ],
      {
        env: { ...process.env, PGPASSWORD: database.password ?? '', PGSSLMODE: 'disable' },
        stdio: ['ignore', fs.openSync('/dev/null', 'w'), 'inherit'],
      },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql exited ${code}`))));
  });
}

async function timed(work) {
  const started = performance.now();
  const result = await work();
  return { seconds: (performance.now() - started) / 1000, result };
}

await runMain(async () => {
  const database = await startDatabase();
  const server = await startServerProcess('sqlgate-server.mjs', { name: 'sqlgate' });
  const target = {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    sslMode: 'disable',
  };
  const idleRss = rssOf(server.pid);
  const answers = [
    ['ndjson', 'sqlgate NDJSON', 'application/x-ndjson', QUERY],
    ['csv', 'sqlgate CSV', 'text/csv', QUERY],
    ['copy', 'sqlgate COPY TO STDOUT', '*/*', `COPY (${QUERY}) TO STDOUT`],
  ];
  const samples = { psql: [], ndjson: [], csv: [], copy: [] };
  const peaks = { ndjson: [], csv: [], copy: [] };
  for (let run = 0; run < RUNS; run++) {
    samples.psql.push((await timed(() => psqlCopy(database))).seconds);
    for (const [format, , accept, sql] of answers) {
      const stop = peakRss(server.pid);
      const { seconds, result } = await timed(() => streamThrough(server.url, target, accept, sql));
      peaks[format].push(stop());
      const complete =
        result.status === 200 &&
        (format === 'ndjson' ? result.tail.includes('"done"') : result.bytes > ROWS * 30);
      if (!complete) throw new Error(`${format}: incomplete answer (${result.status})`);
      samples[format].push(seconds);
    }
  }
  const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const rowsPerSecond = (seconds) => Math.round(ROWS / seconds).toLocaleString('en-US');
  const psqlSeconds = median(samples.psql);
  const rows = [
    ['psql COPY TO STDOUT', rowsPerSecond(psqlSeconds), '1.00×', '–'],
    ...answers.map(([format, label]) => [
      label,
      rowsPerSecond(median(samples[format])),
      `${(psqlSeconds / median(samples[format])).toFixed(2)}×`,
      mb(Math.max(...peaks[format])),
    ]),
  ];
  const header = ['answer', 'rows/s (median)', 'vs psql COPY', 'peak sqlgate RSS'];
  console.log(textTable(header, rows, ['l', 'r', 'r', 'r']));
  console.log(`sqlgate RSS when idle: ${mb(idleRss)}; ${RUNS} alternated runs of ${ROWS} rows.`);
  const section = [
    STREAM_START,
    '## Streaming',
    '',
    `\`npm run bench:stream\`: \`${QUERY}\`, ${RUNS} alternated runs, medians; sqlgate's RSS sampled every 20 ms (idle: ${mb(idleRss)}).`,
    '',
    markdownTable(header, rows, ['l', 'r', 'r', 'r']),
    STREAM_END,
  ].join('\n');
  const current = readDocs();
  const existing = streamSectionOf(current);
  await writeDocs(
    existing ? current.replace(existing, () => section) : `${current.trimEnd()}\n\n${section}\n`,
  );
});
