/**
 * What a strategy needs to run statements for one request: connections lent by the provider, the
 * rules for handing them back clean, timing, and cancellation when the caller goes away.
 */
import { ConnectionError, DatabaseError, ErrorCodes, SqlgateError } from '../errors';
import type { ParsedStatement } from '../parser/types';
import type { Clock } from '../ports/clock';
import type {
  Connection,
  ConnectionProvider,
  ConnectionTarget,
  RunOptions,
} from '../ports/connections';
import type { QueryOptions } from '../request';
import { attemptCache, type CacheAttempt, type RequestCacheScope } from './cache-attempt';
import type { StatementOutcome } from './outcome';

export interface ExecutionSettings {
  /** Rows per statement when the request names no `maxRows`. */
  defaultMaxRows: number;
  /** Clean every connection after every request, not only after session changes. */
  alwaysResetSession: boolean;
  /** Statements of one request that run at the same time on the parallel-read path. */
  maxParallelReads: number;
}

/** Milliseconds, to the microsecond. */
export function elapsed(clock: Clock, since: number): number {
  return Math.round((clock.now() - since) * 1000) / 1000;
}

/** A statement text with the request's row limit and bind parameters. */
export class ExecutionContext {
  /** Milliseconds spent waiting for pooled connections. */
  poolWaitMs = 0;
  private readonly runOptions: RunOptions;
  private readonly active = new Set<Connection>();

  constructor(
    private readonly provider: ConnectionProvider,
    readonly target: ConnectionTarget,
    readonly options: QueryOptions,
    readonly settings: ExecutionSettings,
    readonly clock: Clock,
    private readonly signal?: AbortSignal,
    private readonly cacheScope?: Omit<RequestCacheScope, 'options' | 'maxRows' | 'clock'>,
  ) {
    this.runOptions = {
      rowMode: options.rowMode,
      maxRows: options.maxRows ?? settings.defaultMaxRows,
      ...(options.params ? { params: options.params } : {}),
    };
    signal?.addEventListener('abort', () => this.cancelActive(), { once: true });
  }

  /** Serves a read from the result cache, or prepares to keep its result (DECISIONS 8). */
  cacheAttempt(statement: ParsedStatement): Promise<CacheAttempt> {
    const scope = this.cacheScope && {
      ...this.cacheScope,
      options: this.options,
      maxRows: this.runOptions.maxRows,
      clock: this.clock,
    };
    return attemptCache(scope, statement);
  }

  /** Borrows a connection; when the request has a timeout, it applies to the whole session until reset. */
  async acquire(): Promise<LentConnection> {
    this.throwIfAborted();
    const started = this.clock.now();
    const connection = await this.provider.acquire(
      this.target,
      this.signal ? { signal: this.signal } : {},
    );
    this.poolWaitMs += this.clock.now() - started;
    return new LentConnection(connection, this);
  }

  /** Runs one statement and times it. A database error is an outcome; anything else propagates. */
  async runStatement(lent: LentConnection, statement: ParsedStatement): Promise<StatementOutcome> {
    const started = this.clock.now();
    this.active.add(lent.connection);
    try {
      const result = await lent.run(statement, this.runOptions);
      return { ok: true, statement, result, executionTime: elapsed(this.clock, started) };
    } catch (error) {
      if (error instanceof DatabaseError) {
        return { ok: false, statement, error, executionTime: elapsed(this.clock, started) };
      }
      throw error;
    } finally {
      this.active.delete(lent.connection);
    }
  }

  /**
   * Runs statements in order in one round trip, with sqlgate's control statements around them.
   * Outcomes of the statements that ran; when one failed, its outcome is the last. The error is
   * also returned when a control statement failed (see DatabaseError.failedStep).
   */
  async runBatch(
    lent: LentConnection,
    statements: readonly ParsedStatement[],
    around: Pick<RunOptions, 'before' | 'after'>,
  ): Promise<{ outcomes: StatementOutcome[]; error?: DatabaseError }> {
    const started = this.clock.now();
    this.active.add(lent.connection);
    try {
      const { results, error } = await lent.runBatch(statements, { ...this.runOptions, ...around });
      const total = elapsed(this.clock, started);
      const outcomes: StatementOutcome[] = results.map((result, position) => ({
        ok: true,
        statement: statements[position] as ParsedStatement,
        result,
        // Statements of one round trip are timed by the adapter; a lone one by the whole trip.
        executionTime: statements.length === 1 ? total : (result.durationMs ?? total),
      }));
      if (!error) return { outcomes };
      const failed = statements[results.length];
      if (error.failedStep === 'statement' && failed) {
        const spent = results.reduce((sum, result) => sum + (result.durationMs ?? 0), 0);
        const executionTime = Math.max(0, Math.round((total - spent) * 1000) / 1000);
        outcomes.push({ ok: false, statement: failed, error, executionTime });
      }
      return { outcomes, error };
    } finally {
      this.active.delete(lent.connection);
    }
  }

  /** Runs sqlgate's own statement (BEGIN, COMMIT, SET LOCAL...), rejecting on any error. */
  async runControl(lent: LentConnection, sql: string): Promise<void> {
    this.active.add(lent.connection);
    try {
      await lent.runText(sql);
    } finally {
      this.active.delete(lent.connection);
    }
  }

  throwIfAborted(): void {
    if (this.signal?.aborted) {
      throw new SqlgateError(ErrorCodes.REQUEST_ABORTED, 'The request was aborted by the caller');
    }
  }

  private cancelActive(): void {
    for (const connection of this.active) {
      // Best effort: the statement then fails with 57014 and the request unwinds normally.
      connection.cancel().catch(() => undefined);
    }
  }
}

/**
 * A connection on loan to one request. It remembers whether the session was changed, so that it is
 * cleaned (DISCARD ALL) before another request may use it (DECISIONS.md 2.6), and whether it broke.
 */
export class LentConnection {
  private sessionChanged = false;
  private broken = false;
  private released = false;

  constructor(
    readonly connection: Connection,
    private readonly context: ExecutionContext,
  ) {
    this.sessionChanged = context.settings.alwaysResetSession;
  }

  async run(statement: ParsedStatement, options: RunOptions) {
    if (statement.changesSession) this.sessionChanged = true;
    return this.guard(() => this.connection.run(statement.text, options));
  }

  async runBatch(statements: readonly ParsedStatement[], options: RunOptions) {
    if (statements.some((statement) => statement.changesSession)) this.sessionChanged = true;
    const texts = statements.map((statement) => statement.text);
    return this.guard(() => this.connection.runBatch(texts, options));
  }

  async runText(sql: string): Promise<void> {
    await this.guard(() => this.connection.run(sql, { rowMode: 'array', maxRows: 0 }));
  }

  /** The request's `timeoutMs` as a session setting, so it also covers statements of caller-managed scripts. */
  async applySessionTimeout(): Promise<void> {
    const { timeoutMs } = this.context.options;
    if (timeoutMs === undefined) return;
    this.sessionChanged = true;
    await this.context.runControl(this, `SET statement_timeout = ${timeoutMs}`);
  }

  /** Rolls back a transaction left open or failed; true when there was one. */
  async rollbackIfOpen(): Promise<boolean> {
    if (this.broken || this.connection.transactionStatus() === 'idle') return false;
    await this.context.runControl(this, 'ROLLBACK');
    return true;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const open = !this.broken && this.connection.transactionStatus() !== 'idle';
    this.connection.release({ destroy: this.broken, resetSession: this.sessionChanged || open });
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ConnectionError || !(error instanceof SqlgateError)) this.broken = true;
      throw error;
    }
  }
}
