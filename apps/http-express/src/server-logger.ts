/**
 * The standalone server's logger: pino lines on standard output, written in batches off the
 * request's path (docs/decisions.md 10.50). pino's default writes each line synchronously, a system
 * call per request line on the request's own turn of the event loop.
 */
import pino, { type Logger } from 'pino';

/** Lines are gathered until this many bytes are waiting, then written at once. */
const BATCH_BYTES = 8 * 1024;
/** A quiet server still writes what waits at least this often. */
const FLUSH_INTERVAL_MS = 200;
/**
 * Lines waiting beyond this many bytes are dropped and counted: an output nobody reads (a stopped
 * pipe) must neither grow the heap nor stop the server, as a blocking write would.
 */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** How soon after a drop the count of dropped lines is written. */
const DROP_REPORT_DELAY_MS = 1000;

type BatchedOutput = pino.DestinationStream & { flushSync(): void };

/**
 * A descriptor written asynchronously in batches, dropping and counting lines beyond
 * `maxWaitingBytes` and reporting their number in a line of its own. pino flushes it synchronously
 * on the process's `exit`, so a server stopped by SIGTERM (which exits after closing) loses no line.
 */
export function batchedLogOutput(fd: number, maxWaitingBytes = MAX_WAITING_BYTES): BatchedOutput {
  const stream = pino.destination({
    dest: fd,
    sync: false,
    minLength: BATCH_BYTES,
    periodicFlush: FLUSH_INTERVAL_MS,
    maxLength: maxWaitingBytes,
  });
  const reporter = pino({ level: 'warn' }, stream);
  let dropped = 0;
  let report: NodeJS.Timeout | undefined;
  stream.on('drop', () => {
    dropped++;
    // One line for the lines dropped in a while, once the output may take it again (a report
    // dropped in turn counts in the next). The timer keeps the process until it is written.
    report ??= setTimeout(() => {
      report = undefined;
      const droppedLines = dropped;
      dropped = 0;
      reporter.warn({ droppedLines }, 'log lines dropped: the output did not take them in time');
    }, DROP_REPORT_DELAY_MS);
  });
  return stream;
}

let standardOutput: BatchedOutput | undefined;

/**
 * One per process, shared by every logger this module makes: two writers of their own batches on
 * one descriptor could interleave them in a pipe.
 */
function standardOutputOnce(): BatchedOutput {
  standardOutput ??= batchedLogOutput(1);
  return standardOutput;
}

/** A logger at `level` on the process's batched standard output. */
export function createServerLogger(level: string): Logger {
  return pino({ level }, standardOutputOnce());
}

/**
 * Writes what waits now, before the caller goes on: after a line someone waits for ("listening"),
 * and before anything written to standard output another way.
 */
export function flushServerLog(): void {
  standardOutput?.flushSync();
}
