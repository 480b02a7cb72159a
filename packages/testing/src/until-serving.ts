import type { ChildProcess } from 'node:child_process';

/** How long a throwaway server may take to start serving. */
const READY_TIMEOUT_MS = 10_000;

/**
 * Resolves once `serves()` says the server `child` started is ready; rejects with what it printed
 * if it exits first, or if it is still not ready after READY_TIMEOUT_MS (`what` names it and what
 * was waited for, e.g. `redis-server did not answer PING`).
 */
export async function untilServing(
  child: ChildProcess,
  serves: () => Promise<boolean>,
  what: { name: string; notReady: string },
): Promise<void> {
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`${what.name} exited (${signal ?? code}): ${output.trim().slice(-500)}`)),
    );
  });
  exited.catch(() => undefined);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await Promise.race([serves(), exited])) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what.notReady} within ${READY_TIMEOUT_MS} ms: ${output}`);
}
