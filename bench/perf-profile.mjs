// Where a server's CPU goes, kernel included: runs one workload of bench/http.mjs against one server
// under Linux `perf record` (the `linux-perf` Debian package) and prints CPU µs per request by the
// JavaScript function nearest to each sample, with the builtins, runtime, collector and kernel
// work it caused folded into it. V8's own profiler (bench:profile) samples wall time: a write to a
// socket shows the time the thread spent in the kernel whether or not it ran, and a slower server
// makes the other core idle, so each of its wake-ups costs more. perf counts only CPU time.
//
//   npm run bench:perf -- [workload] [server]     as bench:profile (select1, cached...; sqlgate,
//   PERF_SECONDS=6 PERF_CONNECTIONS=10             fast, baseline, or a layer of bench:layers)
import { spawn, execFileSync } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  connectClient,
  load,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
} from './lib/harness.mjs';
import { prepareBenchTables, requestBody, WORKLOADS } from './lib/workloads.mjs';

const SECONDS = Number(process.env.PERF_SECONDS ?? 6);
const CONNECTIONS = Number(process.env.PERF_CONNECTIONS ?? 10);
const FREQUENCY = 1999;
const [workloadId = 'select1', side = 'sqlgate'] = process.argv.slice(2);
const LAYERS = ['bare-canned', 'adapter-canned', 'core-bare'];
const SCRIPTS = {
  sqlgate: 'sqlgate-server.mjs',
  fast: 'fast-server.mjs',
  baseline: 'baseline-server.mjs',
  ...Object.fromEntries(LAYERS.map((layer) => [layer, 'layer-server.mjs'])),
};
const bodySide = LAYERS.includes(side) ? 'sqlgate' : side;

/** The samples of `perf script`: each a list of symbols, the leaf first. */
function samplesOf(file) {
  const text = execFileSync('perf', ['script', '-i', file, '-F', 'ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const samples = [];
  let stack = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') {
      if (stack.length > 0) samples.push(stack);
      stack = [];
      continue;
    }
    const space = trimmed.indexOf(' ');
    stack.push(space === -1 ? '?' : trimmed.slice(space + 1));
  }
  if (stack.length > 0) samples.push(stack);
  return samples;
}

const shortName = (symbol) =>
  symbol
    .replace(/^JS:[*~^+-]?/, '')
    .replace('file://', '')
    .replace(`${process.cwd()}/`, '')
    .trim() || '(anonymous)';
const inKernel = (stack) => stack.includes('entry_SYSCALL_64_after_hwframe');

function summarize(samples, requests) {
  const perRequest = (count) => (count * 1e6) / FREQUENCY / requests;
  const byFunction = new Map();
  let kernel = 0;
  for (const stack of samples) {
    const js = stack.find((symbol) => symbol.startsWith('JS:'));
    const key = js ? shortName(js) : '(no JavaScript on the stack: event loop, reads, collector)';
    const entry = byFunction.get(key) ?? { all: 0, kernel: 0 };
    entry.all++;
    if (inKernel(stack)) {
      entry.kernel++;
      kernel++;
    }
    byFunction.set(key, entry);
  }
  return { perRequest, byFunction, kernel, total: samples.length };
}

await runMain(async () => {
  const workload = WORKLOADS.find((w) => w.id === workloadId);
  if (!workload || !SCRIPTS[side] || !workload[bodySide]) {
    throw new Error(
      `usage: bench/perf-profile.mjs [${WORKLOADS.map((w) => w.id).join('|')}] [${Object.keys(SCRIPTS).join('|')}]`,
    );
  }
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('perf is missing: apt-get install linux-perf');
  }
  const database = await startDatabase();
  const client = await connectClient(database);
  await prepareBenchTables(client);
  await client.end();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlgate-perf-'));
  const server = await startServerProcess(SCRIPTS[side], {
    name: side,
    // JIT code gets names in /tmp/perf-<pid>.map; V8 then also writes a log, kept out of the
    // working directory.
    nodeArgs: [
      '--perf-basic-prof-only-functions',
      '--no-logfile-per-isolate',
      `--logfile=${path.join(scratch, 'v8.log')}`,
    ],
    env: LAYERS.includes(side) ? { LAYER: side } : {},
  });
  const body = requestBody(workload, bodySide, targetOf(database));
  await load(server, body, CONNECTIONS, 3); // warm-up: JIT and pools, not recorded
  const file = path.join(scratch, 'perf.data');
  const recorder = spawn(
    'perf',
    ['record', '-F', String(FREQUENCY), '-g', '-o', file, '-p', String(server.pid), '--'],
    { stdio: 'ignore' },
  );
  const recorded = new Promise((resolve) => recorder.once('exit', resolve));
  await delay(300);
  const measured = await load(server, body, CONNECTIONS, SECONDS);
  recorder.kill('SIGINT');
  await recorded;
  await server.stop();
  const requests = measured.ok + measured.bad;
  const { perRequest, byFunction, kernel, total } = summarize(samplesOf(file), requests);
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.rmSync(`/tmp/perf-${server.pid}.map`, { force: true });

  const us = (count) => perRequest(count).toFixed(2).padStart(7);
  console.log(
    `${workload.label} on ${side}, ${CONNECTIONS} connections: ${Math.round(measured.reqPerSec)} req/s, ` +
      `${measured.cpuUsPerReq.toFixed(0)} µs CPU/req from /proc; perf saw ${perRequest(total).toFixed(1)} µs, ` +
      `${perRequest(kernel).toFixed(1)} of it in system calls\n`,
  );
  console.log(`   µs/req  of which in system calls   nearest JavaScript function`);
  const top = [...byFunction].sort((a, b) => b[1].all - a[1].all).slice(0, Number(process.env.PERF_TOP ?? 45));
  for (const [name, { all, kernel: inCalls }] of top) {
    console.log(`  ${us(all)}  ${us(inCalls)}                     ${name}`);
  }
});
