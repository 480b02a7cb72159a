/** What a strategy needs to run one request's statements: connections, timing, cancellation. */
import { DatabaseError, ErrorCodes } from '../errors';
import type { ParsedStatement } from '../parser/types';
import type { AbortSignalLike } from '../ports/abort-signal';
import type { Clock } from '../ports/clock';
import { poolIdOf } from '../ports/connections';
import type {
  AcquireOptions,
  Connection,
  ConnectionProvider,
  ConnectionTarget,
  RunOptions,
  StatementResult,
} from '../ports/connections';
import type { PortFailure, Settled } from '../ports/settled';
import type { PoolAcquireEvent, RequestObserver } from '../ports/request-observer';
import type { QueryOptions } from '../request';
import type { RowStream } from '../streaming/event-channel';
import {
  attemptCache,
  attemptWithoutLookup,
  type CacheAttempt,
  type RequestCacheScope,
} from './cache-attempt';
import type { ExecutionFailure, ExecutionOutcome, StatementOutcome } from './outcome';
import type { StrategyName } from './plan';
import { withFields } from '../with-fields';
import { promiseFrom } from '../promise-from';
import { withUnknownOutcome } from './unknown-outcome';
import { LentConnection } from './lent-connection';
import { runFlagsOf } from './statement-flags';
import {
  RequestResultBudget,
  type HeldResult,
  type SharedLimit,
  type SharedResultBudget,
} from './result-budget';
import { transactionPoolingRefusal, type SessionStateNeed } from './transaction-pooling';

/** Why a strategy could not start: the caller went away, or no connection could be had. */
export type StartFailure = Extract<ExecutionFailure, { kind: 'aborted' | 'request' }>;

/** The outcome of a request whose strategy could not start (or go on) before any statement ran. */
export function notStarted(strategy: StrategyName, failure: StartFailure): ExecutionOutcome {
  return { strategy, outcomes: [], transactionUsed: false, rolledBack: false, failure };
}

/** The failure of a request that sent nothing more once its caller went away. */
export const ABORTED_BEFORE_START: StartFailure = Object.freeze({ kind: 'aborted', index: 0 });

export interface ExecutionSettings {
  /** Rows per statement when the request names no `maxRows`. */
  defaultMaxRows: number;
  /** Clean every connection after every request, not only after session changes. */
  alwaysResetSession: boolean;
  /** Statements of one request that run at the same time on the parallel-read path. */
  maxParallelReads: number;
  /** Bytes of rows one request may return (MAX_RESULT_BYTES, docs/decisions.md 10.2). */
  maxResultBytes: number;
  /** Bytes of rows all requests may hold at once (MAX_RESULT_BYTES_TOTAL); absent: no bound. */
  sharedResultBudget?: SharedResultBudget;
  /** Every value as PostgreSQL's text (a CSV answer). */
  textValues?: boolean;
  /** Reads may be kept as named prepared statements (docs/decisions.md 10.30): not in sessions. */
  nameStatements?: boolean;
}

/**
 * How long a server may stay silent beyond the request's timeoutMs before sqlgate gives up on it
 * (docs/decisions.md 10.6): statement_timeout should have answered by then.
 */
export const SILENCE_GRACE_MS = 2000;

/** How long a cancelled statement may take to stop after its caller went away. */
export const ABANDON_GRACE_MS = 5000;

/**
 * A CancelRequest is sent again while the same statement still runs, at most so often: PostgreSQL
 * ignores one that arrives before the backend has read the statement.
 */
export const CANCEL_AGAIN_MS = 100;
export const CANCEL_ATTEMPTS = 3;

/** What a wait for a connection resolves with when the request was cancelled meanwhile. */
const CANCELLED = Symbol('cancelled');

/** Milliseconds, to the microsecond. */
export function elapsed(clock: Clock, since: number): number {
  return Math.round((clock.now() - since) * 1000) / 1000;
}

/** What one request's statements run with. */
export interface ExecutionContextOptions {
  /** Where connections come from: the pools, or one session's own connection. */
  provider: Pick<ConnectionProvider, 'acquire' | 'spareConnections'>;
  target: ConnectionTarget;
  options: QueryOptions;
  settings: ExecutionSettings;
  clock: Clock;
  /** The caller's: aborting it cancels what runs (docs/decisions.md 10.7). */
  signal?: AbortSignalLike | undefined;
  /** The result cache as this request may use it; absent, nothing is looked up or kept. */
  cacheScope?: Pick<RequestCacheScope, 'cache' | 'scope' | 'refresh'> | undefined;
  /** Rows go here as they arrive (a streamed request, docs/decisions.md 10.22). */
  rowStream?: RowStream | undefined;
  /** Told of every pooled connection asked for (docs/decisions.md 10.25). */
  observer?: RequestObserver | undefined;
  /** A batch's values, by statement index (QueryRequest.sql). */
  batchParams?: readonly (readonly unknown[] | undefined)[] | undefined;
}

export class ExecutionContext {
  /** Milliseconds spent waiting for pooled connections. */
  poolWaitMs = 0;
  /** Failures of `acquire`: reported as such, not as failures of the request's work. */
  readonly acquireFailures = new Set<PortFailure>();
  /** A statement needs session state: a transaction pooler refuses it (docs/decisions.md 10.33). */
  sessionStateNeed: SessionStateNeed | undefined;
  private readonly runOptions: RunOptions;
  /** What every acquire of this request asks: the caller's signal ends a wait for the pool. */
  private readonly acquireOptions: AcquireOptions;
  /** The cache as this request's statements use it, made when the first one looks something up. */
  private cacheRequest: RequestCacheScope | undefined;
  /** Options of sqlgate's own statements (BEGIN, COMMIT, SET...): no rows, the same deadline. */
  readonly controlOptions: RunOptions;
  private readonly budget: RequestResultBudget;
  /** Connections running something for this request, each with the number of that run. */
  private readonly active = new Map<Connection, number>();
  private runsStarted = 0;
  /** A connection was lent: something may have been written, to invalidate. */
  connected = false;
  /** Set by `cancel()`: stop as when the caller goes away, but the caller still reads the answer. */
  private cancelRequested = false;
  /** End the waits for pooled connections when the request is cancelled. */
  private readonly cancelWaiters = new Set<() => void>();
  /**
   * CancelRequests on their way: until they arrive nothing is sent or given back, or they could
   * stop the next statement.
   */
  private readonly cancelsInFlight = new Set<Promise<void>>();

  readonly options: QueryOptions;
  readonly settings: ExecutionSettings;

  constructor(private readonly init: ExecutionContextOptions) {
    const { target, options, settings, signal, rowStream } = init;
    this.options = options;
    this.settings = settings;
    // A streamed request keeps no rows: its rows in flight draw on the shared budget through its
    // channel (StreamedRowBudget) instead.
    const shared = rowStream ? undefined : settings.sharedResultBudget;
    this.budget = new RequestResultBudget(
      settings.maxResultBytes,
      shared,
      shared ? poolIdOf(target) : '',
    );
    const silence =
      options.timeoutMs === undefined
        ? {}
        : {
            silenceLimitMs: options.timeoutMs + SILENCE_GRACE_MS,
            stepTimeLimitMs: options.timeoutMs,
          };
    this.runOptions = {
      rowMode: options.rowMode,
      // A streamed request has no row limit unless it names one, and no byte budget: reading
      // waits for the consumer instead.
      maxRows: options.maxRows ?? (rowStream ? Number.MAX_SAFE_INTEGER : settings.defaultMaxRows),
      ...(rowStream ? { maxRowBytes: settings.maxResultBytes } : { budget: this.budget }),
      ...(settings.textValues ? { textValues: true } : {}),
      ...(options.params ? { params: options.params } : {}),
      ...silence,
    };
    this.controlOptions = { rowMode: 'array', maxRows: 0, ...silence };
    this.acquireOptions = signal ? { signal } : {};
    signal?.addEventListener('abort', () => this.cancelActive(), { once: true });
  }

  /** The caller went away or cancelled: nothing more is sent (docs/decisions.md 10.7, 10.26). */
  get aborted(): boolean {
    return this.cancelRequested || (this.init.signal?.aborted ?? false);
  }

  /** True once `cancel()` was called, or the signal said the request was cancelled. */
  get cancelled(): boolean {
    return this.cancelRequested || this.init.signal?.cancelled === true;
  }

  /** What held MAX_RESULT_BYTES_TOTAL limited this request at some point, if it did (10.2). */
  get sharedLimit(): SharedLimit | undefined {
    return this.budget.sharedLimit;
  }

  /** The answer's hold on MAX_RESULT_BYTES_TOTAL, released once its rows leave memory. */
  get heldResult(): HeldResult {
    return this.budget;
  }

  /** Stops the request for a caller still there (docs/decisions.md 10.26). */
  cancel(): void {
    if (this.aborted) return;
    this.cancelRequested = true;
    for (const wake of this.cancelWaiters) wake();
    this.cancelActive();
  }

  /** Cancels what runs now without stopping the request: it goes on after a 57014 failure. */
  interruptRunning(): void {
    for (const [connection, run] of this.active) this.sendCancel(connection, run);
  }

  /** Resolves once every CancelRequest sent for this request has reached its server (or failed). */
  cancelsSettled(): Promise<void> | undefined {
    if (this.cancelsInFlight.size === 0) return undefined;
    return Promise.all(this.cancelsInFlight).then(() => undefined);
  }

  /** Sends a CancelRequest for `run`, again after CANCEL_AGAIN_MS while it goes on. */
  private sendCancel(connection: Connection, run: number, attempt = 1): void {
    // Best effort: the statement then fails with 57014 and the request unwinds normally.
    const sent = connection.cancel().catch(() => undefined);
    this.cancelsInFlight.add(sent);
    void sent.then(() => {
      this.cancelsInFlight.delete(sent);
      if (attempt >= CANCEL_ATTEMPTS) return;
      setTimeout(() => {
        if (this.active.get(connection) === run) this.sendCancel(connection, run, attempt + 1);
      }, CANCEL_AGAIN_MS).unref();
    });
  }

  /** Connections the target's pool could lend now without a wait; undefined when unknown. */
  spareConnections(): number | undefined {
    return this.init.provider.spareConnections?.(this.init.target);
  }

  /** Whether this request's reads look the result cache up (else each attempt is known at once). */
  mayUseCache(): boolean {
    return attemptWithoutLookup(this.init.cacheScope?.cache, this.options) === undefined;
  }

  /** Serves a read from the result cache, or prepares to keep its result (docs/decisions.md 8). */
  cacheAttempt(statement: ParsedStatement): CacheAttempt | Promise<CacheAttempt> {
    const known = attemptWithoutLookup(this.init.cacheScope?.cache, this.options);
    if (known) return known;
    const { cache, scope, refresh } = this.init.cacheScope as Pick<
      RequestCacheScope,
      'cache' | 'scope' | 'refresh'
    >;
    // Named one by one: a spread followed by more fields costs V8 a new class each time
    // (with-fields.ts).
    this.cacheRequest ??= {
      cache,
      scope,
      refresh,
      options: this.options,
      maxRows: this.runOptions.maxRows,
      clock: this.init.clock,
      unlessCancelled: <T>(promise: Promise<T>) => this.unlessCancelled(promise),
    };
    return attemptCache(this.cacheRequest, statement);
  }

  /** `{value}` of `promise`, or undefined as soon as the request is cancelled or its caller goes away. */
  async unlessCancelled<T>(promise: Promise<T>): Promise<{ value: T } | undefined> {
    if (this.aborted) return undefined;
    let wake!: () => void;
    const cancelled = new Promise<undefined>((resolve) => (wake = () => resolve(undefined)));
    this.cancelWaiters.add(wake);
    this.init.signal?.addEventListener('abort', wake, { once: true });
    try {
      return await Promise.race([promise.then((value) => ({ value })), cancelled]);
    } finally {
      this.cancelWaiters.delete(wake);
      this.init.signal?.removeEventListener('abort', wake);
    }
  }

  /** Borrows a connection, or says why not: the caller went away, or none could be lent. */
  async acquire(): Promise<LentConnection | StartFailure> {
    if (this.aborted) return ABORTED_BEFORE_START;
    const started = this.init.clock.now();
    const acquiring = this.init.provider.acquire(this.init.target, this.acquireOptions);
    // A cancel does not wait for the pool or the connect: the request answers at once, and a
    // connection that arrives later goes straight back, unused.
    let wake!: () => void;
    let acquired: Settled<Connection> | typeof CANCELLED;
    try {
      acquired = await new Promise<Settled<Connection> | typeof CANCELLED>((resolve, reject) => {
        wake = () => resolve(CANCELLED);
        this.cancelWaiters.add(wake);
        acquiring.then(resolve, reject);
      });
    } finally {
      this.cancelWaiters.delete(wake);
    }
    if (acquired === CANCELLED) {
      void acquiring.then((late) => (late.ok ? late.value.release() : undefined));
      return ABORTED_BEFORE_START;
    }
    const ended = this.init.clock.now();
    this.poolWaitMs += ended - started;
    if (this.init.observer?.poolAcquired) this.reportAcquire(started, ended, acquired);
    if (!acquired.ok) {
      this.acquireFailures.add(acquired.error);
      return this.aborted ? ABORTED_BEFORE_START : { kind: 'request', error: acquired.error };
    }
    const refusal =
      this.sessionStateNeed &&
      (await transactionPoolingRefusal(acquired.value, this.sessionStateNeed));
    if (refusal) {
      acquired.value.release();
      return { kind: 'request', error: refusal };
    }
    this.connected = true;
    return new LentConnection(acquired.value, this);
  }

  private reportAcquire(startMs: number, endMs: number, acquired: Settled<Connection>): void {
    const event: PoolAcquireEvent = { poolId: poolIdOf(this.init.target), startMs, endMs };
    if (!acquired.ok) {
      const { error } = acquired;
      event.failureCode = error.code;
      if (error.code === ErrorCodes.POOL_EXHAUSTED) event.timedOut = true;
      if (error instanceof DatabaseError) event.sqlState = error.sqlState;
    }
    this.init.observer?.poolAcquired?.(event);
  }

  /**
   * Runs and times one statement; a failure is an outcome too (docs/decisions.md 10.5). Undefined
   * when the caller has gone: nothing is sent (docs/decisions.md 10.7).
   */
  runStatement(
    lent: LentConnection,
    statement: ParsedStatement,
  ): Promise<StatementOutcome | undefined> {
    return this.timedOutcome(lent, statement, () =>
      lent.run(statement, this.optionsFor([statement])),
    );
  }

  /**
   * Runs statements in one round trip with control statements around them: the outcomes of those
   * that ran (a failed one last) and the error. Undefined when the caller has gone.
   */
  async runBatch(
    lent: LentConnection,
    statements: readonly ParsedStatement[],
    around: Pick<RunOptions, 'before' | 'after'>,
  ): Promise<{ outcomes: StatementOutcome[]; error?: PortFailure } | undefined> {
    const cancels = this.cancelsSettled();
    if (cancels) await cancels;
    if (this.aborted) return undefined;
    const started = this.init.clock.now();
    this.active.set(lent.connection, ++this.runsStarted);
    try {
      const { results, error } = await lent.runBatch(
        statements,
        withFields(this.optionsFor(statements), around),
      );
      const total = elapsed(this.init.clock, started);
      // Statements of one round trip are timed by the adapter, and ran one after another.
      let sentAt = started;
      const outcomes: StatementOutcome[] = results.map((result, position) => {
        const executionTime = statements.length === 1 ? total : (result.durationMs ?? total);
        const outcome: StatementOutcome = {
          ok: true,
          statement: statements[position] as ParsedStatement,
          result,
          executionTime,
          startedAt: sentAt,
        };
        sentAt += executionTime;
        return outcome;
      });
      if (!error) return { outcomes };
      const failed = statements[results.length];
      if (error instanceof DatabaseError && error.failedStep === 'statement' && failed) {
        const spent = results.reduce((sum, result) => sum + (result.durationMs ?? 0), 0);
        const executionTime = Math.max(0, Math.round((total - spent) * 1000) / 1000);
        outcomes.push({ ok: false, statement: failed, error, executionTime, startedAt: sentAt });
      }
      return { outcomes, error };
    } finally {
      this.active.delete(lent.connection);
    }
  }

  /** Runs a COPY ... FROM STDIN fed from `source`, as runStatement runs a statement. */
  runCopyFrom(
    lent: LentConnection,
    statement: ParsedStatement,
    source: AsyncIterable<Uint8Array>,
  ): Promise<StatementOutcome | undefined> {
    return this.timedOutcome(lent, statement, () => lent.copyFrom(statement, source));
  }

  /** `send`'s result or failure as the statement's outcome, timed; a cancel reaches it meanwhile. */
  private timedOutcome(
    lent: LentConnection,
    statement: ParsedStatement,
    send: () => Promise<Settled<StatementResult>>,
  ): Promise<StatementOutcome | undefined> {
    const cancels = this.cancelsSettled();
    if (cancels) return cancels.then(() => this.timedOutcomeNow(lent, statement, send));
    return this.timedOutcomeNow(lent, statement, send);
  }

  /** timedOutcome once no CancelRequest is on its way: chained, on the path of every statement. */
  private timedOutcomeNow(
    lent: LentConnection,
    statement: ParsedStatement,
    send: () => Promise<Settled<StatementResult>>,
  ): Promise<StatementOutcome | undefined> {
    if (this.aborted) return Promise.resolve(undefined);
    const started = this.init.clock.now();
    const { connection } = lent;
    const statusBefore = connection.transactionStatus();
    this.active.set(connection, ++this.runsStarted);
    return promiseFrom(send).then(
      (run): StatementOutcome => {
        this.active.delete(connection);
        const executionTime = elapsed(this.init.clock, started);
        if (run.ok) {
          return { ok: true, statement, result: run.value, executionTime, startedAt: started };
        }
        const error = withUnknownOutcome(run.error, statement, statusBefore);
        return { ok: false, statement, error, executionTime, startedAt: started };
      },
      (defect: unknown) => {
        this.active.delete(connection);
        throw defect;
      },
    );
  }

  /** Runs sqlgate's own statement (BEGIN, COMMIT, SET LOCAL...); its failure, if any. */
  async runControl(lent: LentConnection, sql: string): Promise<PortFailure | undefined> {
    const cancels = this.cancelsSettled();
    if (cancels) await cancels;
    this.active.set(lent.connection, ++this.runsStarted);
    try {
      return await lent.runText(sql);
    } finally {
      this.active.delete(lent.connection);
    }
  }

  private optionsFor(statements: readonly ParsedStatement[]): RunOptions {
    const flags =
      statements.length === 1
        ? runFlagsOf(statements[0] as ParsedStatement).alone
        : {
            stopEarly: statements.map((statement) => runFlagsOf(statement).stopEarly),
            nameable: statements.map((statement) => runFlagsOf(statement).nameable),
          };
    const options: RunOptions = withFields(this.runOptions, { stopEarly: flags.stopEarly });
    if (this.settings.nameStatements) options.nameable = flags.nameable;
    if (this.init.rowStream) options.rowSink = this.init.rowStream.sinkFor(statements);
    const { batchParams } = this.init;
    if (batchParams)
      options.batchParams = statements.map((statement) => batchParams[statement.index]);
    return options;
  }

  private cancelActive(): void {
    this.interruptRunning();
    // A server that ignores the cancel (frozen, or not PostgreSQL at all) would keep the
    // connection busy for ever: after a grace it is closed, and the request unwinds with that.
    const stillRunning = [...this.active.keys()];
    if (stillRunning.length === 0) return;
    setTimeout(() => {
      for (const connection of stillRunning) {
        if (this.active.has(connection)) connection.abandon?.();
      }
    }, ABANDON_GRACE_MS).unref();
  }
}
