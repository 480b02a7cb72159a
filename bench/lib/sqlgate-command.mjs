// The `sqlgate` command as users run it (`node apps/http-express/dist/bin.js`), for the benchmarks
// that measure its default configuration: configured from the environment only, its log lines on
// standard output, which the bench reads and discards as a log collector would.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onCleanup, repoRoot } from './harness.mjs';

const BIN = path.join(repoRoot, 'apps', 'http-express', 'dist', 'bin.js');
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;

/** A port nobody listens on now (the kernel's pick, released at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/* global fetch -- a Node.js 20 global */
/** Resolves once `url` answers /healthz; throws if `child` exits first or it takes too long. */
async function waitUntilHealthy(child, url, name) {
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited before listening (code ${child.exitCode})`);
    }
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (waited > START_TIMEOUT_MS) throw new Error(`${name} did not start within 30 s`);
    await sleep(100);
  }
}

/**
 * Starts the `sqlgate` command on 127.0.0.1 and a free port, with no environment but `env` and
 * what it needs to listen there: nothing of the bench's own environment (a LOG_LEVEL or
 * NODE_OPTIONS in the shell) changes what is measured. Resolves once it answers /healthz, with
 * {name, url, pid, stop, logBytes}: logBytes() is how many bytes of log it has written so far.
 */
export async function startSqlgateCommand({ name = 'sqlgate', env = {} } = {}) {
  if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first.`);
  const port = await freePort();
  const child = spawn(process.execPath, [BIN], {
    cwd: repoRoot,
    env: { PORT: String(port), HOSTNAME: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Read and dropped, as a log collector takes lines off the pipe; counted for the report.
  let logBytes = 0;
  child.stdout.on('data', (chunk) => {
    logBytes += chunk.length;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited, sleep(STOP_TIMEOUT_MS, 'timeout')])) === 'timeout') {
      child.kill('SIGKILL');
      await exited;
    }
  };
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(child, url, name);
  return { name, url, pid: child.pid, stop, logBytes: () => logBytes };
}
