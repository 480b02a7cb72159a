/**
 * The `sqlgate` command's logger: pino lines on standard output, written in batches off the
 * request's path (docs/decisions.md 10.50). pino's default writes each line with a synchronous
 * system call on the request's own turn of the event loop, and waits there while a pipe is full.
 */
import pino, { type Logger } from 'pino';

/** Lines are gathered until this much waits (in characters, as every size here), then written. */
const BATCH_BYTES = 8 * 1024;
/** A quiet server still writes what waits at least this often. */
const FLUSH_INTERVAL_MS = 200;
/**
 * Lines beyond this many bytes waiting (gathered, or handed to the output and not yet taken) are
 * dropped and counted: an output nobody reads (a stopped pipe) must neither grow the heap nor stop
 * the server.
 */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** Room a report of dropped lines needs (it is a short line). */
const REPORT_ROOM = 1024;
/** How soon after a drop the count of dropped lines is written, or tried again. */
const DROP_REPORT_DELAY_MS = 1000;
/** How long a stopping command waits for its output to take the last lines. */
const FINAL_FLUSH_MS = 2000;

/** Where the batches go: standard output, or any stream. */
export interface LogSink {
  /** What it was handed and has not taken yet. */
  readonly writableLength: number;
  write(batch: string): unknown;
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/**
 * Lines gathered for `sink`, written in batches. The sink is a stream of the event loop (standard
 * output is one): a write never waits for the reader, and what it has not taken yet is its
 * `writableLength`. A write to a file descriptor through the thread pool, as pino's asynchronous
 * destination does, would also stop the process from exiting while a reader takes nothing.
 */
export class BatchedLogOutput {
  private waiting: string[] = [];
  private waitingBytes = 0;
  private dropped = 0;
  private dropReport: NodeJS.Timeout | undefined;
  private readonly reporter: Logger;

  constructor(
    private readonly sink: LogSink,
    private readonly maxWaitingBytes = MAX_WAITING_BYTES,
  ) {
    setInterval(() => this.flush(), FLUSH_INTERVAL_MS).unref();
    this.reporter = pino({ level: 'warn' }, this);
  }

  /** pino's destination: one line. */
  write(line: string): boolean {
    if (this.waitingBytes + this.sink.writableLength + line.length > this.maxWaitingBytes) {
      this.drop();
      return true;
    }
    this.waiting.push(line);
    this.waitingBytes += line.length;
    if (this.waitingBytes >= BATCH_BYTES) this.flush();
    return true;
  }

  /** Hands what waits to the sink. */
  flush(): void {
    if (this.waiting.length === 0) return;
    const batch = this.waiting.length === 1 ? (this.waiting[0] as string) : this.waiting.join('');
    this.waiting = [];
    this.waitingBytes = 0;
    this.sink.write(batch);
  }

  /** Hands what waits to the sink, and resolves once it took it, or after `withinMs`. */
  flushWithin(withinMs: number): Promise<void> {
    this.flush();
    if (this.sink.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.sink.off('drain', done);
        resolve();
      };
      const timer = setTimeout(done, withinMs).unref();
      this.sink.once('drain', done);
    });
  }

  /** Counts a dropped line; a report of the drops follows (the timer keeps the process for it). */
  private drop(): void {
    this.dropped++;
    this.dropReport ??= setTimeout(() => this.reportDrops(), DROP_REPORT_DELAY_MS);
  }

  /**
   * One line for the lines dropped in a while, written once the output has room for it again; until
   * then the count goes on, so no drop goes unreported.
   */
  private reportDrops(): void {
    this.dropReport = undefined;
    if (this.waitingBytes + this.sink.writableLength + REPORT_ROOM > this.maxWaitingBytes) {
      this.dropReport = setTimeout(() => this.reportDrops(), DROP_REPORT_DELAY_MS);
      return;
    }
    const droppedLines = this.dropped;
    this.dropped = 0;
    this.reporter.warn({ droppedLines }, 'log lines dropped: the output did not take them in time');
    this.flush(); // now: a quiet process might end before the next batch
  }
}

let standardOutput: BatchedLogOutput | undefined;

/** One per process, shared by every logger this module makes: their lines keep one order. */
function standardOutputOnce(): BatchedLogOutput {
  if (standardOutput) return standardOutput;
  const output = new BatchedLogOutput(process.stdout);
  // Whatever ends the process: what waits is handed to standard output, which writes what the
  // reader takes at once and never waits.
  process.once('exit', () => output.flush());
  standardOutput = output;
  return output;
}

/** A logger at `level` on the process's batched standard output. */
export function createServerLogger(level: string): Logger {
  return pino({ level }, standardOutputOnce());
}

/**
 * Writes what waits, before the caller goes on: after a line someone waits for ("listening"),
 * before anything written to standard output another way, and before the command exits. Waits
 * for the output to take it at most FINAL_FLUSH_MS.
 */
export function flushServerLog(): Promise<void> {
  return standardOutput?.flushWithin(FINAL_FLUSH_MS) ?? Promise.resolve();
}
