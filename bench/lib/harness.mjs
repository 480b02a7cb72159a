// Shared plumbing of the HTTP and memory benchmarks: the built packages, a test database, server
// child processes, clean-up on every exit path, machine facts and docs/benchmarks.md sections.
import autocannon from 'autocannon';
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const require = createRequire(import.meta.url);
const docsFile = path.join(repoRoot, 'docs', 'benchmarks.md');

/** Requires a built workspace package, with a clear message when `npm run build` has not run. */
export function requireBuilt(relativeDirectory) {
  const entry = path.join(repoRoot, relativeDirectory, 'dist', 'index.js');
  if (!fs.existsSync(entry)) {
    throw new Error(`${relativeDirectory}/dist is missing: run \`npm run build\` first.`);
  }
  return require(entry);
}

// ---------------------------------------------------------------------------------------------
// Clean-up: everything started registers how to stop it; it runs once, on success, on failure
// and on SIGINT/SIGTERM.

const cleanups = [];
let cleaning;

export function onCleanup(fn) {
  cleanups.push(fn);
}

function cleanUp() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const fn = cleanups.pop();
      try {
        await fn();
      } catch (error) {
        console.error(`clean-up step failed: ${error?.message ?? error}`);
      }
    }
  })();
  return cleaning;
}

/** Runs a benchmark's body, then stops everything it started, whatever happened. */
export async function runMain(body) {
  const onSignal = (signal) => {
    console.error(`\n${signal}: stopping servers and the database…`);
    cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let failed = false;
  try {
    await body();
  } catch (error) {
    failed = true;
    console.error(error?.stack ?? error);
  } finally {
    await cleanUp();
  }
  process.exit(failed ? 1 : (process.exitCode ?? 0));
}

// ---------------------------------------------------------------------------------------------
// The database.

/** Starts a test database (TEST_DATABASE_URL, a container or a throwaway local cluster). */
export async function startDatabase() {
  const { startTestDatabase } = requireBuilt('packages/testing');
  const database = await startTestDatabase();
  onCleanup(() => database.stop());
  return database;
}

/** One autocannon run against a server; also the CPU time its process spent per response. */
export async function load(server, body, connections, duration) {
  const before = cpuTimesOf(server.pid);
  const result = await autocannon({
    url: `${server.url}/api/query`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections,
    duration,
    timeout: 30,
  });
  const after = cpuTimesOf(server.pid);
  const user = after.user - before.user;
  const cpu = user + after.system - before.system;
  const ok = result['2xx'];
  return {
    reqPerSec: ok / result.duration,
    cpuUsPerReq: (cpu * 1e6) / (ok + result.non2xx),
    userCpuUsPerReq: (user * 1e6) / (ok + result.non2xx),
    cpuShare: cpu / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    bad: result.non2xx + result.errors + result.timeouts,
    statusCodes: result.statusCodeStats,
  };
}

/** The connection fields of a request body for the bench's database, without TLS. */
export function targetOf(database) {
  return {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    sslMode: 'disable',
  };
}

/** A pg client on the database, without TLS (as the servers under test connect). */
export async function connectClient(database) {
  const pg = require('pg');
  const client = new pg.Client({
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    ssl: false,
  });
  await client.connect();
  return client;
}

// ---------------------------------------------------------------------------------------------
// Server child processes: each prints one JSON line {url} once listening, and exits when told to
// (SIGTERM) or when its stdin closes (the bench process died).

export async function startServerProcess(
  script,
  { env = {}, name = path.basename(script), nodeArgs = [] } = {},
) {
  const child = spawn(
    process.execPath,
    [...nodeArgs, path.join(repoRoot, 'bench', 'servers', script)],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  onCleanup(() => stopProcess(child, exited));
  const url = await new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s`)), 30_000);
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const newline = buffered.indexOf('\n');
      if (newline === -1) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(buffered.slice(0, newline)).url);
      } catch {
        reject(new Error(`${name} printed ${JSON.stringify(buffered.slice(0, newline))}`));
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before listening (code ${code}, signal ${signal})`));
    });
  });
  child.stdout.resume();
  return { url, pid: child.pid, name, stop: () => stopProcess(child, exited) };
}

async function stopProcess(child, exited) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 15_000).unref());
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Wires a server child's exit: SIGTERM/SIGINT or stdin closing run `close`, then exit. */
export function exitWhenTold(close) {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    const hard = setTimeout(() => process.exit(0), 12_000);
    hard.unref();
    Promise.resolve()
      .then(close)
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}

/** User + system CPU seconds a process has used so far (Linux /proc; NaN elsewhere). */
export function cpuSecondsOf(pid) {
  const { user, system } = cpuTimesOf(pid);
  return user + system;
}

/** User and system CPU seconds a process has used so far, apart (Linux /proc; NaN elsewhere). */
function cpuTimesOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
  } catch {
    return { user: NaN, system: NaN };
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// ---------------------------------------------------------------------------------------------
// HTTP helpers.

/* global fetch, AbortSignal -- Node.js 20 globals */
export async function postJson(url, body, { timeoutMs = 120_000 } = {}) {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, bytes: Buffer.byteLength(text), ms };
}

// ---------------------------------------------------------------------------------------------
// Facts and formatting.

export async function machineFacts(client) {
  const cpus = os.cpus();
  const { rows } = await client.query('SELECT version() AS version');
  return {
    cpu: `${cpus[0]?.model?.trim() ?? 'unknown'} × ${cpus.length}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    postgres: rows[0].version,
  };
}

export function machineLines(facts) {
  return [
    `- CPU: ${facts.cpu}`,
    `- memory: ${facts.memory}`,
    `- OS: ${facts.os}`,
    `- Node.js: ${facts.node}`,
    `- PostgreSQL: ${facts.postgres}`,
  ];
}

/** A Markdown table; `align` holds 'l' or 'r' per column. */
export function markdownTable(header, rows, align = []) {
  const rule = header.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The same table padded for a terminal. */
export function textTable(header, rows, align = []) {
  const widths = header.map((h, i) =>
    Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)),
  );
  const line = (cells) =>
    cells
      .map((c, i) =>
        align[i] === 'r' ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]),
      )
      .join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

// ---------------------------------------------------------------------------------------------
// docs/benchmarks.md: bench/http.mjs writes the whole file but keeps the memory section, which
// bench/memory.mjs replaces between its markers.

const MEMORY_START = '<!-- memory:start -->';
const MEMORY_END = '<!-- memory:end -->';

export function readDocs() {
  return fs.existsSync(docsFile) ? fs.readFileSync(docsFile, 'utf8') : '';
}

export function memorySectionOf(text) {
  return sectionOf(text, MEMORY_START, MEMORY_END);
}

/** bench/stream.mjs's section, kept by bench/http.mjs like the memory section. */
export const STREAM_START = '<!-- stream:start -->';
export const STREAM_END = '<!-- stream:end -->';

export function streamSectionOf(text) {
  return sectionOf(text, STREAM_START, STREAM_END);
}

/** bench/observability.mjs's section, kept by bench/http.mjs like the memory section. */
export const OBSERVABILITY_START = '<!-- observability:start -->';
export const OBSERVABILITY_END = '<!-- observability:end -->';

export function observabilitySectionOf(text) {
  return sectionOf(text, OBSERVABILITY_START, OBSERVABILITY_END);
}

/** bench/cache.mjs's section, kept by bench/http.mjs like the memory section. */
export const CACHE_START = '<!-- cache:start -->';
export const CACHE_END = '<!-- cache:end -->';

export function cacheSectionOf(text) {
  return sectionOf(text, CACHE_START, CACHE_END);
}

/** bench/workers.mjs's section, kept by bench/http.mjs like the memory section. */
export const WORKERS_START = '<!-- workers:start -->';
export const WORKERS_END = '<!-- workers:end -->';

export function workersSectionOf(text) {
  return sectionOf(text, WORKERS_START, WORKERS_END);
}

/** bench/compare.mjs's section, kept by bench/http.mjs like the memory section. */
export const COMPARE_START = '<!-- compare:start -->';
export const COMPARE_END = '<!-- compare:end -->';

export function compareSectionOf(text) {
  return sectionOf(text, COMPARE_START, COMPARE_END);
}

/** bench/layers.mjs's section, kept by bench/http.mjs like the memory section. */
export const LAYERS_START = '<!-- layers:start -->';
export const LAYERS_END = '<!-- layers:end -->';

export function layersSectionOf(text) {
  return sectionOf(text, LAYERS_START, LAYERS_END);
}

/** Replaces a section (start and end markers included) of docs/benchmarks.md, or appends it. */
export async function writeSection(section, sectionOfText) {
  const current = readDocs();
  const existing = sectionOfText(current);
  await writeDocs(
    existing ? current.replace(existing, () => section) : `${current.trimEnd()}\n\n${section}\n`,
  );
}

function sectionOf(text, startMarker, endMarker) {
  const start = text.indexOf(startMarker);
  const end = text.indexOf(endMarker, start);
  return start === -1 || end === -1 ? undefined : text.slice(start, end + endMarker.length);
}

/** Writes docs/benchmarks.md, formatted like the rest of the repository (Prettier) when it can be. */
export async function writeDocs(text) {
  let output = text.endsWith('\n') ? text : `${text}\n`;
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(docsFile)) ?? {};
    output = await prettier.format(output, { ...options, filepath: docsFile });
  } catch {
    // Unformatted Markdown is still correct Markdown.
  }
  fs.mkdirSync(path.dirname(docsFile), { recursive: true });
  fs.writeFileSync(docsFile, output);
}

/** Replaces the memory section of docs/benchmarks.md, or appends it. */
export async function writeMemorySection(section) {
  const wrapped = `${MEMORY_START}\n${section.trim()}\n${MEMORY_END}`;
  const current = readDocs();
  const existing = memorySectionOf(current);
  if (existing) await writeDocs(current.replace(existing, () => wrapped));
  else if (current.trim()) await writeDocs(`${current.trimEnd()}\n\n${wrapped}\n`);
  else await writeDocs(`# Benchmarks\n\n${wrapped}\n`);
}

// ---------------------------------------------------------------------------------------------
// Memory of a server child process, from /proc (Linux).

/** VmRSS and VmHWM of a process, in bytes. */
export function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Resets VmHWM to the current RSS; false when the kernel does not allow it. */
export function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts measuring `pid`'s peak RSS: the kernel's high-water mark when it can be reset, else the
 * largest of samples taken every `sampleMs`. The returned function stops and gives the peak.
 */
export function peakMemory(pid, sampleMs = 20) {
  const resettable = resetPeak(pid);
  let sampled = memoryOf(pid).rss;
  const timer = setInterval(() => {
    try {
      sampled = Math.max(sampled, memoryOf(pid).rss);
    } catch {
      /* the process is gone */
    }
  }, sampleMs);
  return () => {
    clearInterval(timer);
    const now = memoryOf(pid);
    return resettable ? now.hwm : Math.max(sampled, now.rss);
  };
}
