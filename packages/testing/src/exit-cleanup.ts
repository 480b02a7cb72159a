/**
 * Synchronous clean-ups run when the process exits, so a test run that dies (or forgets to call
 * stop()) does not leave PostgreSQL servers and their temporary directories behind. Only
 * synchronous work is possible inside a process 'exit' handler.
 */
const pending = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const cleanUp of pending) {
    try {
      cleanUp();
    } catch {
      // Exiting anyway; one failed clean-up must not prevent the others.
    }
  }
  pending.clear();
}

/** Registers `cleanUp` to run at process exit; call the returned function once it is no longer needed. */
export function cleanUpOnExit(cleanUp: () => void): () => void {
  if (!installed) {
    process.on('exit', runAll);
    installed = true;
  }
  pending.add(cleanUp);
  return () => {
    pending.delete(cleanUp);
  };
}
