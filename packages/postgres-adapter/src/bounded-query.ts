/**
 * Statements in one round trip, each reading at most `maxRows` rows, with sqlgate's control
 * statements (BEGIN, SET LOCAL, COMMIT) around them: Parse, Bind, (Describe,) Execute per step and
 * one Sync, in one write. A read proven free of side effects asks for maxRows + 1 rows, so the
 * server stops there (PortalSuspended); every other statement runs to completion and its extra rows
 * are dropped unread (docs/decisions.md 10.4). After an error the server skips to Sync.
 *
 * Nameable reads on an idle connection may use named statements (docs/decisions.md 10.30): Bind
 * without Parse when already prepared, recorded as prepared once the round trip ended without error.
 */
import {
  ErrorCodes,
  RequestError,
  type FailedStep,
  type RowSink,
  type RunOptions,
  type StatementResult,
} from '@sqlgate/core';
import { serialize, type DatabaseError } from 'pg-protocol';
import { isCopyStatement } from './copy-in-query';
import type { WireField } from './backend-messages';
import { ProtocolViolation, type RoundTripReader } from './message-framing';
import { prepareValue } from './pg-internals';
import type { NamedStatement, PreparedStatements } from './prepared-statements';
import type { ServerSocket } from './server-socket';
import { StatementReader } from './statement-reader';
import type { TypeRegistry } from './types/type-registry';

const SYNC = serialize.sync();
const FLUSH = serialize.flush();
/** Execute's row count is a signed 32-bit integer. */
const MAX_EXECUTE_ROWS = 2 ** 31 - 2;
const NO_STEPS: readonly string[] = [];
const NO_VALUES: readonly unknown[] = [];
const DESCRIBE_PORTAL = serialize.describe({ type: 'P', name: '' });
/** Describing the statement adds its parameter types, which decide caching (docs/decisions.md 10.36). */
const DESCRIBE_UNNAMED_STATEMENT = serialize.describe({ type: 'S', name: '' });

/**
 * The routine of 0A000 "cached plan must not change result type": other 0A000s share the code,
 * and the message is translated; the routine never is.
 */
const RESULT_TYPE_CHANGED_ROUTINE = 'RevalidateCachedQuery';

/** The connection's prepared statements, and whether this round trip may name its statements. */
export interface StatementNaming {
  /** Their pending Close messages go in front of the round trip. */
  statements: PreparedStatements;
  /** The statements may be named (docs/decisions.md 10.30) and the connection is idle. */
  named: boolean;
  /** Every named statement is closed and parsed anew: a name failed the round trip once. */
  renew?: boolean;
}

/** What a round trip is sent with, besides its statements and options. */
export interface RoundTripParts {
  types: TypeRegistry;
  socket: ServerSocket;
  /** How its statements are named; unnamed without. */
  naming?: StatementNaming | undefined;
}

/**
 * A round trip that failed (a server error, a lost connection, a broken protocol), with where it
 * happened: a failed COMMIT is not a failed statement, and the statements before a failure did run.
 */
export class RoundTripFailure extends Error {
  constructor(
    /** The server's ErrorResponse (pg-protocol's DatabaseError), or why the connection failed. */
    readonly reason: unknown,
    readonly step: FailedStep,
    /** Results of the statements that completed before the failure. */
    readonly completed: StatementResult[],
  ) {
    super('a statement of the round trip failed');
  }
}

export class BoundedQuery implements RoundTripReader {
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
  /** The framing's count of dropped rows when the current step began. */
  private droppedAtStepStart = 0;
  private failure: unknown;
  /** How each statement went out, when the round trip named any; undefined otherwise. */
  private plan: (NamedStatement | undefined)[] | undefined;
  private settled = false;

  private readonly socket: ServerSocket;
  private readonly naming: StatementNaming | undefined;

  constructor(
    private readonly texts: readonly string[],
    private readonly options: RunOptions,
    { types, socket, naming }: RoundTripParts,
  ) {
    this.socket = socket;
    this.naming = naming;
    this.before = options.before ?? NO_STEPS;
    this.after = options.after ?? NO_STEPS;
    const sink = options.rowSink;
    this.readers = texts.map(
      (_, position) =>
        new StatementReader({
          types,
          rowMode: options.rowMode,
          maxRows: options.maxRows,
          framing: socket.framing,
          // Streamed rows are not kept: memory is bounded by waiting for the consumer instead.
          budget: sink ? undefined : options.budget,
          textValues: options.textValues === true,
          stream: sink && {
            sink,
            position,
            pause: () => socket.pauseReading(sink.drained()),
            ...(options.maxRowBytes ? { maxRowBytes: options.maxRowBytes } : {}),
          },
        }),
    );
    // The promise's own functions, not closures: wrapped, they kept rows alive into the old
    // generation (six times the collection time for 100-row reads).
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The readers of the statements, for type names learned afterwards. */
  get statementReaders(): readonly StatementReader[] {
    return this.readers;
  }

  /** Sends the round trip, and reads its answer from here on. */
  start(): void {
    this.socket.startRoundTrip(this);
    if (this.settled) return; // the connection had ended
    // Built with push, not spreads: this runs once per round trip, on every request.
    const messages: Buffer[] = [];
    for (const name of this.naming?.statements.takeCloses() ?? NO_STEPS) {
      messages.push(serialize.close({ type: 'S', name }));
    }
    const closes = messages.length;
    try {
      const values = (this.options.params ?? NO_VALUES) as unknown[];
      const { stopEarly, maxRows } = this.options;
      if (this.naming?.named) {
        this.plan = this.naming.statements.plan(this.texts, this.naming.renew);
      }
      // A Flush after each step makes the server send its results at once, not at Sync, so each
      // statement is timed on its own (docs/decisions.md 10.25).
      const flush = this.stepCount > 1;
      for (const text of this.before) {
        pushControlMessages(messages, text);
        if (flush) messages.push(FLUSH);
      }
      this.texts.forEach((text, index) => {
        // 0: every row; the server runs the statement to its end.
        // The row count is an int32; a larger limit is no limit (a streamed request without maxRows).
        const rows = stopEarly?.[index] && maxRows < MAX_EXECUTE_ROWS ? maxRows + 1 : 0;
        const own = this.options.batchParams?.[index];
        this.pushStatementMessages(
          messages,
          text,
          index,
          (own as unknown[] | undefined) ?? values,
          rows,
        );
        if (flush) messages.push(FLUSH);
      });
      for (const text of this.after) pushControlMessages(messages, text);
      messages.push(SYNC);
    } catch (error) {
      // A parameter pg cannot convert: nothing is sent but the Closes and a Sync, whose
      // ReadyForQuery settles this.
      this.plan = undefined;
      messages.length = closes;
      messages.push(SYNC);
      this.failure = new RequestError(
        ErrorCodes.INVALID_REQUEST,
        `'params' could not be sent: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    this.lastCompletion = performance.now();
    this.droppedAtStepStart = this.socket.framing.facts.droppedRows;
    const sink = this.options.rowSink;
    if (sink?.copyData) {
      this.socket.framing.admitCopyData = copyDataAdmission(sink, this.options.maxRowBytes);
    }
    this.socket.write(messages.length === 1 ? (messages[0] as Buffer) : Buffer.concat(messages));
  }

  /**
   * Whether this round trip's `error` was caused by a named statement (docs/decisions.md 10.30):
   * 26000 (not held by this backend) or 0A000 (result type changed) without Parse, 42P05 (name
   * already held) with Parse. Nothing of the failed statement ran.
   */
  failedForAName(error: unknown): boolean {
    if (!this.plan || !(error instanceof RoundTripFailure) || error.step !== 'statement') {
      return false;
    }
    // The failed statement is the one after those that completed.
    const statement = this.plan[error.completed.length];
    if (!statement) return false;
    const { code, routine } = (error.reason ?? {}) as { code?: unknown; routine?: unknown };
    if (code === '26000') return !statement.parse;
    if (code === '42P05') return statement.parse;
    return code === '0A000' && !statement.parse && routine === RESULT_TYPE_CHANGED_ROUTINE;
  }

  /** Refunds the byte budget its rows took: the round trip is sent again, its rows not returned. */
  refundBudget(): void {
    const { budget } = this.options;
    if (!budget) return;
    for (const reader of this.readers) budget.remainingBytes += reader.takeCharged();
  }

  parameterDescription(types: number[]): void {
    this.currentReader()?.describeParameters(types);
  }

  rowDescription(fields: WireField[]): void {
    this.currentReader()?.describe(fields);
  }

  /** A row of the current statement; after an ErrorResponse the round trip takes no more rows. */
  dataRow(values: (string | null)[]): void {
    if (this.failure !== undefined) return;
    const reader = this.currentReader();
    if (!reader) {
      this.violate(new ProtocolViolation('The server sent a row outside a statement'));
      return;
    }
    try {
      reader.row(values);
    } catch (error) {
      this.violate(error);
    }
  }

  portalSuspended(): void {
    this.currentReader()?.suspended();
    this.completeStep();
  }

  commandComplete(tag: string): void {
    this.currentReader()?.complete(tag);
    this.completeStep();
  }

  emptyQuery(): void {
    this.completeStep();
  }

  /** COPY data goes in only through CopyInQuery: a COPY here is failed, for any other step a fault. */
  copyInResponse(): void {
    const statement = this.currentStep() === 'statement' ? this.step - this.before.length : -1;
    if (!isCopyStatement(this.texts[statement] ?? '')) {
      this.violate(
        new ProtocolViolation('The server asked for COPY data for a statement that is not a COPY'),
      );
      return;
    }
    this.socket.write(serialize.copyFail('COPY FROM STDIN is not supported over HTTP'));
    // In COPY mode the server skipped the Sync that ends the round trip; after its error it waits for one.
    if (this.step === this.stepCount - 1) this.socket.write(SYNC);
  }

  /** COPY TO STDOUT data: to the sink of a streamed COPY; from any other statement, a fault. */
  copyData(chunk: Buffer): void {
    const sink = this.options.rowSink;
    const position = this.step - this.before.length;
    if (!sink?.copyData || this.currentStep() !== 'statement') {
      this.violate(new ProtocolViolation('The server sent COPY data nobody asked for'));
      return;
    }
    // A view of the received bytes: the sink copies it before this returns.
    if (!sink.copyData(position, chunk)) {
      this.socket.pauseReading(sink.drained());
    }
  }

  /** Settles at ReadyForQuery, so the caller sees the transaction status the error left. */
  serverError(error: DatabaseError): void {
    this.failure ??= new RoundTripFailure(error, this.currentStep(), this.results);
  }

  /** An ErrorResponse that came before the end (a FATAL) says best why the round trip failed. */
  connectionLost(error: Error): void {
    this.fail(this.failure ?? new RoundTripFailure(error, this.currentStep(), this.results));
  }

  readyForQuery(): void {
    this.socket.framing.resetRowLimits();
    this.socket.resumeReading();
    if (this.failure === undefined && this.step !== this.stepCount) {
      this.violate(
        new ProtocolViolation('The server ended the round trip before every step was answered'),
      );
      return;
    }
    if (this.failure !== undefined) this.fail(this.failure);
    else this.succeed();
  }

  /** The server broke the protocol: this query fails with it, and the connection is ended. */
  private violate(error: unknown): void {
    const violation =
      error instanceof ProtocolViolation
        ? error
        : new ProtocolViolation('The server sent a message that could not be read');
    this.fail(new RoundTripFailure(violation, this.currentStep(), this.results));
    this.socket.abort(violation);
  }

  /** Names first parsed up to the failed step (a Parse refused with 42P05 created nothing). */
  private namesLeftBehind(error: unknown): string[] {
    if (!this.plan) return [];
    let last = this.texts.length - 1;
    if (error instanceof RoundTripFailure && error.step === 'before') return [];
    if (error instanceof RoundTripFailure && error.step === 'statement') {
      last = error.completed.length;
      if ((error.reason as { code?: unknown } | undefined)?.code === '42P05') last--;
    }
    const names: string[] = [];
    for (let index = 0; index <= last; index++) {
      const statement = this.plan[index];
      if (statement?.parse && !statement.entry) names.push(statement.name);
    }
    return names;
  }

  /** The round trip ended without an error: the statements it parsed are prepared. */
  private succeed(): void {
    if (!this.settled) {
      this.settled = true;
      this.naming?.statements.confirm(this.texts, this.plan ?? []);
    }
    this.resolve(this.results);
  }

  /** The round trip failed: the names it may have created are closed with the next one. */
  private fail(error: unknown): void {
    if (!this.settled) {
      this.settled = true;
      this.naming?.statements.abandon(this.namesLeftBehind(error));
    }
    this.reject(error);
  }

  /** Parse (unnamed, or named when new), Bind, Describe and Execute of one statement. */
  private pushStatementMessages(
    messages: Buffer[],
    text: string,
    index: number,
    values: unknown[],
    rows: number,
  ): void {
    const named = this.plan?.[index];
    if (!named) {
      messages.push(
        serialize.parse({ text, name: '', types: [] }),
        serialize.bind({ values, valueMapper: parameterText }),
        values.length > 0 ? DESCRIBE_UNNAMED_STATEMENT : DESCRIBE_PORTAL,
        serialize.execute({ portal: '', rows }),
      );
      return;
    }
    if (named.renew) messages.push(serialize.close({ type: 'S', name: named.name }));
    // No parameter types, as statementName hashes.
    if (named.parse) messages.push(serialize.parse({ text, name: named.name, types: [] }));
    const { entry } = named;
    if (values.length === 0 && entry) {
      // Without parameters these bytes depend on the name and the row count only.
      let cached = entry.executeBytes;
      if (cached?.rows !== rows) {
        cached = { rows, bytes: Buffer.concat(executeMessages(named.name, values, rows)) };
        entry.executeBytes = cached;
      }
      messages.push(cached.bytes);
      return;
    }
    messages.push(...executeMessages(named.name, values, rows));
  }

  private get stepCount(): number {
    return this.before.length + this.texts.length + this.after.length;
  }

  private currentStep(): FailedStep {
    if (this.step < this.before.length) return 'before';
    return this.step < this.before.length + this.texts.length ? 'statement' : 'after';
  }

  private currentReader(): StatementReader | undefined {
    return this.readers[this.step - this.before.length];
  }

  private completeStep(): void {
    const reader = this.currentReader();
    const dropped = this.socket.framing.facts.droppedRows;
    const now = performance.now();
    if (reader) {
      const durationMs = Math.round((now - this.lastCompletion) * 1000) / 1000;
      const result = reader.result(durationMs, dropped - this.droppedAtStepStart);
      this.options.rowSink?.complete(this.results.length, result);
      this.results.push(result);
    }
    // A control step's time (BEGIN, SET LOCAL) is not the next statement's.
    this.lastCompletion = now;
    this.droppedAtStepStart = dropped;
    this.step++;
  }
}

/** Rows sqlgate's own questions may read (type names, a check, a probe's pid). */
const OWN_QUESTION_MAX_ROWS = 10_000;

/**
 * The last statement's rows of `sql`, asked on `socket` in a round trip of its own. Rejects with
 * the server's error or the connection's failure.
 */
export async function askServer<Row>(
  socket: ServerSocket,
  types: TypeRegistry,
  sql: readonly string[],
  params?: readonly unknown[],
): Promise<Row[]> {
  const query = new BoundedQuery(
    sql,
    { rowMode: 'object', maxRows: OWN_QUESTION_MAX_ROWS, ...(params ? { params } : {}) },
    { types, socket },
  );
  query.start();
  try {
    const results = await query.done;
    return (results[results.length - 1]?.rows ?? []) as Row[];
  } catch (error) {
    throw error instanceof RoundTripFailure ? error.reason : error;
  }
}

/** pg's conversion, except that a JSON `-0` keeps its sign (pg would send `0`). */
function parameterText(value: unknown): unknown {
  return Object.is(value, -0) ? '-0' : prepareValue(value);
}

/** Bind of a prepared statement into the unnamed portal, Describe and Execute. */
function executeMessages(statement: string, values: unknown[], rows: number): Buffer[] {
  return [
    serialize.bind({ statement, values, valueMapper: parameterText }),
    values.length > 0 ? serialize.describe({ type: 'S', name: statement }) : DESCRIBE_PORTAL,
    serialize.execute({ portal: '', rows }),
  ];
}

/** A control statement: no rows, no description. */
function pushControlMessages(messages: Buffer[], text: string): void {
  messages.push(
    serialize.parse({ text, name: '', types: [] }),
    serialize.bind({}),
    serialize.execute({ portal: '', rows: 0 }),
  );
}

/** Why a COPY line of `bytes` may not be read for `sink` (MAX_RESULT_BYTES or _TOTAL), if so. */
function copyDataAdmission(
  sink: RowSink,
  maxBytes = Number.MAX_SAFE_INTEGER,
): (bytes: number) => string | undefined {
  return (bytes) => {
    if (bytes > maxBytes) {
      return `A line of the COPY data (${bytes} bytes) is larger than MAX_RESULT_BYTES (${maxBytes}); the COPY was stopped`;
    }
    if (sink.admit && !sink.admit(bytes)) {
      return `A line of the COPY data (${bytes} bytes) did not fit in MAX_RESULT_BYTES_TOTAL, which other answers hold; the COPY was stopped, and the same request may succeed later`;
    }
    return undefined;
  };
}
