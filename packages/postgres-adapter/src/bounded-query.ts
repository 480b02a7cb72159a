/**
 * Statements in one round trip, each reading at most `maxRows` rows, optionally with sqlgate's own
 * control statements (BEGIN, SET LOCAL, COMMIT) before and after them.
 *
 * Every step goes out as Parse, Bind, (Describe,) Execute, and one Sync closes them all, in a single
 * buffer: one write, one round trip. A statement's Execute asks for maxRows + 1 rows, so the server
 * stops there (PortalSuspended) and closes the portal with the next Bind or at Sync: an unbounded
 * SELECT costs neither the server nor this process more than the limit, and the extra row says
 * the result was truncated. pg-cursor reads the same way but needs a second round trip to close
 * the portal. After an error the server skips the remaining steps up to Sync: later statements
 * and a COMMIT never run, the transaction is left failed, and the caller rolls it back.
 */
import type { RunOptions, StatementResult } from '@sqlgate/core';
import { serialize } from 'pg-protocol';
import { StatementReader, type WireField } from './statement-reader';
import type { TypeRegistry } from './types/type-registry';

// pg's own conversion of JavaScript values to parameters (arrays, Dates, Buffers, JSON objects).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** The part of pg's protocol connection a submittable drives. */
export interface ProtocolConnection {
  stream: { write(buffer: Buffer): boolean };
  sendCopyFail(message: string): void;
  once?(event: string, listener: () => void): void;
  off?(event: string, listener: () => void): void;
}

const SYNC = serialize.sync();
const NO_STEPS: readonly string[] = [];

/** Which step of the round trip failed. */
export type Step = 'before' | 'statement' | 'after';

/** What a server error carries once this query has seen it. */
export interface StepFailureMarks {
  sqlgateStep?: Step;
  /** Results of the statements that completed before the failure. */
  sqlgateResults?: StatementResult[];
}

export class BoundedQuery {
  readonly done: Promise<StatementResult[]>;
  private resolve!: (results: StatementResult[]) => void;
  private reject!: (error: unknown) => void;
  private readonly readers: StatementReader[];
  private readonly results: StatementResult[] = [];
  private readonly before: readonly string[];
  private readonly after: readonly string[];
  /** Index of the step whose answer comes next: before..., the statements, after... */
  private step = 0;
  private lastCompletion = 0;
  private failure: unknown;

  constructor(
    private readonly texts: readonly string[],
    private readonly options: RunOptions,
    types: TypeRegistry,
  ) {
    this.before = options.before ?? NO_STEPS;
    this.after = options.after ?? NO_STEPS;
    this.readers = texts.map(() => new StatementReader(types, options.rowMode, options.maxRows));
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The readers of the statements, for type names learned afterwards. */
  get statementReaders(): readonly StatementReader[] {
    return this.readers;
  }

  submit(connection: ProtocolConnection): Error | null {
    let messages: Buffer[];
    try {
      const values = (this.options.params ?? []) as unknown[];
      messages = [
        ...this.before.flatMap(controlMessages),
        ...this.texts.flatMap((text) => [
          serialize.parse({ text, name: '', types: [] }),
          serialize.bind({ values, valueMapper: prepareValue }),
          serialize.describe({ type: 'P', name: '' }),
          serialize.execute({ portal: '', rows: this.options.maxRows + 1 }),
        ]),
        ...this.after.flatMap(controlMessages),
        SYNC,
      ];
    } catch (error) {
      // A parameter pg cannot convert: nothing is sent but a Sync, whose ReadyForQuery settles this.
      messages = [SYNC];
      this.failure = error;
    }
    this.lastCompletion = performance.now();
    connection.stream.write(
      messages.length === 1 ? (messages[0] as Buffer) : Buffer.concat(messages),
    );
    return null;
  }

  handleRowDescription(message: { fields: WireField[] }): void {
    this.currentReader()?.describe(message.fields);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    try {
      this.currentReader()?.row(message.fields);
    } catch (error) {
      this.failure ??= error;
    }
  }

  handlePortalSuspended(): void {
    this.currentReader()?.suspended();
    this.completeStep();
  }

  handleCommandComplete(message: { text: string }): void {
    this.currentReader()?.complete(message.text);
    this.completeStep();
  }

  handleEmptyQuery(): void {
    this.completeStep();
  }

  handleCopyInResponse(connection: ProtocolConnection): void {
    connection.sendCopyFail('COPY FROM STDIN is not supported over HTTP');
  }

  handleCopyData(): void {}

  /**
   * pg calls this for an ErrorResponse and for broken connections. After an ErrorResponse the
   * server still sends ReadyForQuery with the new transaction status: settle only then, so the
   * caller sees the status the error left (a failed transaction), not the one before it.
   */
  handleError(error: unknown, connection?: ProtocolConnection): void {
    const isServerError = typeof (error as { severity?: unknown }).severity === 'string';
    if (!isServerError || !connection?.once) {
      this.reject(error);
      return;
    }
    // The step and the results before it travel with the error: a failed COMMIT is not a failed
    // statement, and the statements before a failure did run.
    const marks = error as StepFailureMarks;
    marks.sqlgateStep = this.currentStep();
    marks.sqlgateResults = this.results;
    const settle = (): void => {
      connection.off?.('readyForQuery', settle);
      connection.off?.('end', settle);
      this.reject(error);
    };
    connection.once('readyForQuery', settle);
    connection.once('end', settle);
  }

  handleReadyForQuery(): void {
    if (this.failure !== undefined) this.reject(this.failure);
    else this.resolve(this.results);
  }

  private currentStep(): Step {
    if (this.step < this.before.length) return 'before';
    return this.step < this.before.length + this.texts.length ? 'statement' : 'after';
  }

  private currentReader(): StatementReader | undefined {
    return this.readers[this.step - this.before.length];
  }

  private completeStep(): void {
    const reader = this.currentReader();
    if (reader) {
      const now = performance.now();
      this.results.push(reader.result(Math.round((now - this.lastCompletion) * 1000) / 1000));
      this.lastCompletion = now;
    }
    this.step++;
  }
}

/** A control statement: no rows, no description. */
function controlMessages(text: string): Buffer[] {
  return [
    serialize.parse({ text, name: '', types: [] }),
    serialize.bind({}),
    serialize.execute({ portal: '', rows: 0 }),
  ];
}
