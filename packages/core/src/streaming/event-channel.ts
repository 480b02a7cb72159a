/**
 * Carries a streamed request's events from the connection (push) to the transport (pull): past
 * HIGH_WATER_BYTES of rows reading pauses until LOW_WATER_BYTES, so a slow HTTP reader holds
 * PostgreSQL, not this process's memory (docs/decisions.md 10.22).
 */
import type { ParsedStatement } from '../parser/types';
import type { FieldDescription, RowSink, StatementResult } from '../ports/connections';
import { commandOf } from '../execution/response';
import type { SharedLimit, StreamedRowBudget } from '../execution/result-budget';
import type { StreamEvent } from './stream-events';

const HIGH_WATER_BYTES = 256 * 1024;
const LOW_WATER_BYTES = 64 * 1024;
/** Rows per `rows` event: fewer events, fewer wake-ups. */
const ROWS_PER_EVENT = 256;
/** COPY data is gathered into events of up to this many bytes (a server sends a message per row). */
const COPY_BYTES_PER_EVENT = 64 * 1024;

/** Where a streamed request's statements deliver their rows. */
export interface RowStream {
  /** A sink for one call of the connection port, whose `sql` list is `statements`. */
  sinkFor(statements: readonly ParsedStatement[]): RowSink;
}

export class EventChannel implements RowStream, AsyncIterable<StreamEvent> {
  private queue: StreamEvent[] = [];
  private queuedBytes = 0;
  /** Bytes of the rows of each queued `rows` event. */
  private readonly batchBytes = new WeakMap<StreamEvent, number>();
  /** The COPY event still being filled, while it is the last one queued. */
  private copyBatch:
    { event: Extract<StreamEvent, { type: 'copy' }>; buffer: Uint8Array; used: number } | undefined;
  private closed = false;
  private consumerGone = false;
  private wakeConsumer: (() => void) | undefined;
  private drainWaiters: (() => void)[] = [];
  private firstEvent: (() => void) | undefined;
  /** Resolves when the first event is queued. */
  readonly started: Promise<void>;
  /** Whether any event was queued. */
  hasStarted = false;
  /** Says which statements' `end` events must wait, and for what (`holdEnds`). */
  private endGate: ((statement: ParsedStatement) => Promise<void> | undefined) | undefined;
  /** `end` events held until their promise settles. */
  private readonly held = new WeakMap<StreamEvent, Promise<void>>();

  /**
   * `acceptsCopy`: a COPY ... TO STDOUT, whose data this channel carries (else COPY data is a
   * fault). `rowBudget`: admits each row, and gets it back once taken (docs/decisions.md 10.2).
   */
  constructor(
    private readonly statementText: (statement: ParsedStatement) => string,
    private readonly acceptsCopy = false,
    private readonly rowBudget?: StreamedRowBudget,
  ) {
    this.started = new Promise((resolve) => (this.firstEvent = resolve));
  }

  /**
   * Holds each statement's `end` event until `gate`'s promise for it settles, so the cache has
   * dropped what a streamed write changed before its caller learns of it (docs/decisions.md 10.27).
   */
  holdEnds(gate: (statement: ParsedStatement) => Promise<void> | undefined): void {
    this.endGate = gate;
  }

  sinkFor(statements: readonly ParsedStatement[]): RowSink {
    const described = new Set<number>();
    // A header alone does not start the answer: a statement that fails before its first row
    // is still answered as JSON with its status.
    const header = (position: number, fields: FieldDescription[]): void => {
      const statement = statements[position] as ParsedStatement;
      described.add(position);
      this.push(
        {
          type: 'statement',
          index: statement.index,
          statement: this.statementText(statement),
          fields,
        },
        false,
      );
    };
    const { rowBudget } = this;
    return {
      describe: header,
      ...(rowBudget ? { admit: (bytes: number) => rowBudget.admit(bytes) } : {}),
      row: (_position, row, bytes) => this.pushRow(row, bytes),
      ...(this.acceptsCopy
        ? { copyData: (_position: number, data: Uint8Array) => this.pushCopy(data) }
        : {}),
      drained: () => this.drained(),
      complete: (position, result: StatementResult) => {
        // A statement without rows (INSERT, SET) sent no description: its header comes now.
        if (!described.has(position)) header(position, result.fields);
        const statement = statements[position] as ParsedStatement;
        const end: StreamEvent = {
          type: 'end',
          index: statement.index,
          command: commandOf(result, statement),
          rowCount: result.rowCount,
          executionTime: result.durationMs ?? 0,
          ...(result.truncated
            ? {
                truncated: true,
                ...(result.truncatedBy ? { truncatedBy: result.truncatedBy } : {}),
              }
            : {}),
        };
        const gate = this.endGate?.(statement);
        if (gate)
          this.held.set(
            end,
            gate.catch(() => undefined),
          );
        this.push(end);
      },
    };
  }

  /**
   * Queues an event for the consumer (dropped once the consumer is gone). `starts`: the answer has
   * begun with it (a row, COPY data, a statement's end).
   */
  push(event: StreamEvent, starts = true): void {
    if (this.consumerGone || this.closed) return;
    this.queue.push(event);
    if (starts) this.signalStart();
    this.wake();
  }

  /** No event follows. */
  close(): void {
    this.closed = true;
    // Whoever waits for the first event learns that none will come.
    this.firstEvent?.();
    this.firstEvent = undefined;
    this.wake();
    this.releaseProducer();
  }

  /** The consumer went away: nothing is queued any more, and the producer is never held again. */
  cancel(): void {
    this.consumerGone = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.releaseRows();
    this.releaseProducer();
    this.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    try {
      for (;;) {
        const event = this.queue.shift();
        if (event) {
          if (event.type === 'rows' || event.type === 'copy') this.taken(event);
          const held = this.held.get(event);
          if (held) await held;
          yield event;
          // Asked for more: the consumer has written these rows and waited for its client.
          if (event.type === 'rows' || event.type === 'copy') {
            this.rowBudget?.free(this.batchBytes.get(event) ?? 0);
          }
          continue;
        }
        if (this.closed || this.consumerGone) return;
        await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
      }
    } finally {
      // Leaving the loop early (a consumer's break or error) counts as going away; either way
      // nothing of the stream's rows is held any more.
      if (this.closed) this.releaseRows();
      else this.cancel();
    }
  }

  /** What held MAX_RESULT_BYTES_TOTAL refused a row, if it did (10.2). */
  get sharedLimit(): SharedLimit | undefined {
    return this.rowBudget?.sharedLimit;
  }

  /** The rows in flight's hold on the shared budget, if they draw on one. */
  get heldRows(): StreamedRowBudget | undefined {
    return this.rowBudget;
  }

  /** Nothing of the stream's rows is held any more: what they drew goes back. Idempotent. */
  readonly releaseRows = (): void => {
    this.rowBudget?.close();
  };

  private pushRow(row: unknown, bytes: number): boolean {
    if (this.consumerGone || this.closed) {
      this.rowBudget?.free(bytes);
      return true;
    }
    let last = this.queue[this.queue.length - 1];
    if (last?.type === 'rows' && last.rows.length < ROWS_PER_EVENT) last.rows.push(row);
    else {
      last = { type: 'rows', rows: [row] };
      this.push(last);
    }
    this.batchBytes.set(last, (this.batchBytes.get(last) ?? 0) + bytes);
    this.queuedBytes += bytes;
    this.wake();
    return this.queuedBytes < HIGH_WATER_BYTES;
  }

  /** Copies `data` (valid only during the call) into the COPY event being filled. */
  private pushCopy(data: Uint8Array): boolean {
    if (this.consumerGone || this.closed) {
      this.rowBudget?.free(data.length);
      return true;
    }
    let batch = this.copyBatch;
    const last = this.queue[this.queue.length - 1];
    if (!batch || last !== batch.event || batch.used + data.length > batch.buffer.length) {
      const buffer = new Uint8Array(Math.max(COPY_BYTES_PER_EVENT, data.length));
      batch = { event: { type: 'copy', data: buffer.subarray(0, 0) }, buffer, used: 0 };
      this.copyBatch = batch;
      this.push(batch.event);
    }
    batch.buffer.set(data, batch.used);
    batch.used += data.length;
    batch.event.data = batch.buffer.subarray(0, batch.used);
    this.batchBytes.set(batch.event, batch.used);
    this.queuedBytes += data.length;
    this.wake();
    return this.queuedBytes < HIGH_WATER_BYTES;
  }

  private drained(): Promise<void> {
    if (this.consumerGone || this.closed || this.queuedBytes <= LOW_WATER_BYTES) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Rows left the queue: the producer may read again once it is low enough. */
  private taken(event: StreamEvent): void {
    this.queuedBytes -= this.batchBytes.get(event) ?? 0;
    if (this.queuedBytes <= LOW_WATER_BYTES) this.releaseProducer();
  }

  private releaseProducer(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }

  private signalStart(): void {
    this.hasStarted = true;
    this.firstEvent?.();
    this.firstEvent = undefined;
  }
}
