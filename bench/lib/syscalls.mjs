// System calls per request of a server process: `strace -c -f -p <pid>` attached (all its threads)
// while autocannon sends a fixed number of requests, then stopped, which makes it print its counts.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { onCleanup } from './harness.mjs';

const ATTACH_TIMEOUT_MS = 10_000;
/** strace reports each thread attached; the others follow the first within this time. */
const SETTLE_MS = 300;

/** Per syscall, its calls, from `strace -c -U name,calls` output; `total` among them. */
function parseCounts(text) {
  const counts = new Map();
  for (const line of text.split('\n')) {
    const match = /^(\w+)\s+(\d+)(\s+\d+)?\s*$/.exec(line);
    if (match) counts.set(match[1], Number(match[2]));
  }
  return counts;
}

/**
 * Starts strace on `pid`; resolves with a function that stops it and gives its counts, or with
 * {failed} when it cannot attach (ptrace not permitted, strace missing).
 */
async function attachStrace(pid) {
  const output = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-strace-')), 'counts');
  const child = spawn(
    'strace',
    ['-c', '-f', '-U', 'name,calls', '-S', 'calls', '-o', output, '-p', String(pid)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise((resolve) => {
    child.once('exit', resolve);
    child.once('error', (error) => resolve(error));
  });
  onCleanup(() => child.exitCode === null && child.kill('SIGINT'));
  let stderr = '';
  const attached = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ATTACH_TIMEOUT_MS);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (/attached/.test(stderr)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    exited.then(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!attached) {
    if (child.exitCode === null) child.kill('SIGKILL');
    const error = await exited;
    return { failed: (error instanceof Error ? error.message : stderr).trim() || 'no output' };
  }
  await sleep(SETTLE_MS);
  return {
    stop: async () => {
      child.kill('SIGINT');
      await exited;
      const text = fs.readFileSync(output, 'utf8');
      fs.rmSync(path.dirname(output), { recursive: true, force: true });
      return parseCounts(text);
    },
  };
}

/**
 * System calls per request of `server` (its process, every thread) over `requests` POSTs of
 * `body` at `connections` connections: {total, top: [[syscall, per request], …], bad}, or
 * {failed: why} when strace could not attach. The server is slowed down under strace, so its
 * answers may batch differently than without; the counts say what it asks of the kernel.
 */
export async function syscallsPerRequest(server, body, { requests, connections, top = 6 }) {
  const tracing = await attachStrace(server.pid);
  if (tracing.failed) return { failed: tracing.failed };
  const result = await autocannon({
    url: `${server.url}/api/query`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections,
    amount: requests,
    timeout: 30,
  });
  const counts = await tracing.stop();
  const answered = result['2xx'];
  const perRequest = (calls) => calls / answered;
  return {
    total: perRequest(counts.get('total') ?? NaN),
    top: [...counts]
      .filter(([name]) => name !== 'total')
      .slice(0, top)
      .map(([name, calls]) => [name, perRequest(calls)]),
    bad: result.non2xx + result.errors + result.timeouts,
  };
}
