// Streamed answers against psql's own COPY: 5,000,000 rows × 2 columns as NDJSON, CSV and COPY TO
// STDOUT passed through sqlgate, beside `psql -c "COPY (...) TO STDOUT" > /dev/null` on the same
// query, alternated in one run, with the peak RSS of sqlgate's process. Then COPY FROM of a
// generated CSV (1 GiB; COPY_BYTES to change) through POST /api/copy beside psql's \copy. npm run bench:stream (builds first). Writes the
// streaming section of docs/benchmarks.md.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  markdownTable,
  memoryOf,
  peakMemory,
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
  targetOf,
} from './lib/harness.mjs';

const ROWS = Number(process.env.STREAM_ROWS ?? 5_000_000);
const COPY_BYTES = Number(process.env.COPY_BYTES ?? 1024 ** 3);
/** Further Node options for sqlgate's process (its V8 settings are applied in any case). */
const SERVER_NODE_OPTIONS = process.env.SQLGATE_NODE_OPTIONS ?? '';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const QUERY = `SELECT g, md5(g::text) FROM generate_series(1, ${ROWS}) g`;

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

/** A CSV file of about `bytes` bytes: id, md5-like text, a number. */
async function generatedCsv(bytes) {
  const file = path.join(os.tmpdir(), `sqlgate-bench-copy-${process.pid}.csv`);
  const out = fs.createWriteStream(file);
  let written = 0;
  for (let id = 1; written < bytes; id++) {
    const line = `${id},${(id * 2654435761).toString(16).padStart(32, '0')},${id % 1000}\n`;
    written += line.length;
    if (!out.write(line)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve) => out.end(resolve));
  return { file, bytes: written };
}

/** POST /api/copy with the file as the data part, streamed. */
function uploadCopy(url, target, file) {
  const boundary = `sqlgate-bench-${process.pid}`;
  const request = JSON.stringify({
    ...target,
    sql: 'COPY bench_copy FROM STDIN WITH (FORMAT csv)',
  });
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n${request}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="data.csv"\r\n` +
    'Content-Type: text/csv\r\n\r\n';
  const tail = `\r\n--${boundary}--\r\n`;
  return new Promise((resolve, reject) => {
    const client = http.request(
      `${url}/api/copy`,
      { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, body: JSON.parse(text) }));
      },
    );
    client.on('error', reject);
    client.write(head);
    const data = fs.createReadStream(file);
    data.on('end', () => client.end(tail));
    data.pipe(client, { end: false });
  });
}

function psqlCommand(database, command) {
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
        command,
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
  const server = await startServerProcess('sqlgate-server.mjs', {
    name: 'sqlgate',
    env: { NODE_OPTIONS: SERVER_NODE_OPTIONS },
  });
  const target = targetOf(database);
  const idleRss = memoryOf(server.pid).rss;
  const answers = [
    ['ndjson', 'sqlgate NDJSON', 'application/x-ndjson', QUERY],
    ['csv', 'sqlgate CSV', 'text/csv', QUERY],
    ['copy', 'sqlgate COPY TO STDOUT', '*/*', `COPY (${QUERY}) TO STDOUT`],
  ];
  const samples = { psql: [], ndjson: [], csv: [], copy: [] };
  const peaks = { ndjson: [], csv: [], copy: [] };
  for (let run = 0; run < RUNS; run++) {
    samples.psql.push(
      (await timed(() => psqlCommand(database, `COPY (${QUERY}) TO STDOUT`))).seconds,
    );
    for (const [format, , accept, sql] of answers) {
      const stop = peakMemory(server.pid);
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
  // COPY FROM: psql's \copy and POST /api/copy of the same file, alternated.
  const csv = await generatedCsv(COPY_BYTES);
  const loads = { psql: [], sqlgate: [] };
  const loadPeaks = [];
  const recreate =
    'DROP TABLE IF EXISTS bench_copy; CREATE UNLOGGED TABLE bench_copy (id bigint, h text, n int)';
  try {
    for (let run = 0; run < RUNS; run++) {
      await psqlCommand(database, recreate);
      loads.psql.push(
        (
          await timed(() =>
            psqlCommand(database, `\\copy bench_copy FROM '${csv.file}' WITH (FORMAT csv)`),
          )
        ).seconds,
      );
      await psqlCommand(database, recreate);
      const stop = peakMemory(server.pid);
      const { seconds, result } = await timed(() => uploadCopy(server.url, target, csv.file));
      loadPeaks.push(stop());
      if (result.status !== 200) throw new Error(`POST /api/copy answered ${result.status}`);
      loads.sqlgate.push(seconds);
    }
  } finally {
    fs.rmSync(csv.file, { force: true });
  }
  const mbPerSecond = (seconds) => `${(csv.bytes / 1024 / 1024 / seconds).toFixed(0)} MB/s`;
  const loadHeader = ['load', 'throughput (median)', 'vs psql \\copy', 'peak sqlgate RSS'];
  const loadRows = [
    ['psql \\copy', mbPerSecond(median(loads.psql)), '1.00×', '–'],
    [
      'sqlgate POST /api/copy',
      mbPerSecond(median(loads.sqlgate)),
      `${(median(loads.psql) / median(loads.sqlgate)).toFixed(2)}×`,
      mb(Math.max(...loadPeaks)),
    ],
  ];
  console.log(textTable(loadHeader, loadRows, ['l', 'r', 'r', 'r']));
  const section = [
    STREAM_START,
    '## Streaming',
    '',
    `\`npm run bench:stream\`: \`${QUERY}\`, ${RUNS} alternated runs, medians; sqlgate's RSS sampled every 20 ms (idle: ${mb(idleRss)}); sqlgate runs with the standalone server's V8 settings (\`applyServerV8Settings()\`, docs/decisions.md 10.24) and Node options ${SERVER_NODE_OPTIONS ? `\`${SERVER_NODE_OPTIONS}\`` : 'none'}.`,
    '',
    markdownTable(header, rows, ['l', 'r', 'r', 'r']),
    '',
    `COPY FROM of a generated ${mb(csv.bytes)} CSV into an unlogged table, ${RUNS} alternated runs, medians:`,
    '',
    markdownTable(loadHeader, loadRows, ['l', 'r', 'r', 'r']),
    STREAM_END,
  ].join('\n');
  const current = readDocs();
  const existing = streamSectionOf(current);
  await writeDocs(
    existing ? current.replace(existing, () => section) : `${current.trimEnd()}\n\n${section}\n`,
  );
});
