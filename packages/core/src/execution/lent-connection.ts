/**
 * A connection lent to one request, and the rules for handing it back clean.
 */
import { ConnectionError, DatabaseError } from '../errors';
import type { ParsedStatement } from '../parser/types';
import type { Connection, RunOptions, StatementResult } from '../ports/connections';
import type { PortFailure, Settled } from '../ports/settled';
import { promiseFrom } from '../promise-from';
import type { ExecutionContext } from './context';

/**
 * A connection on loan to one request. It remembers whether the session was changed, so that it is
 * cleaned (DISCARD ALL) before another request may use it (docs/decisions.md 2.6), and whether it broke.
 */
export class LentConnection {
  private sessionChanged = false;
  private broken = false;
  private released = false;
  /**
   * The request's timeoutMs, kept by cancelling each statement that outlasts it, where a SET of
   * statement_timeout would stay on a server connection other callers get (applySessionTimeout).
   */
  private cancelAfterMs: number | undefined;

  constructor(
    readonly connection: Connection,
    private readonly context: ExecutionContext,
  ) {
    this.sessionChanged = context.settings.alwaysResetSession;
  }

  run(statement: ParsedStatement, options: RunOptions): Promise<Settled<StatementResult>> {
    if (statement.changesSession) this.sessionChanged = true;
    // `watch`, chained rather than awaited on the path every statement takes.
    const sent = promiseFrom(() => this.connection.run(statement.sql, options)).then(
      (run) => {
        if (!run.ok) this.noteFailure(run.error);
        return run;
      },
      (defect: unknown) => {
        this.broken = true;
        throw defect;
      },
    );
    if (this.cancelAfterMs === undefined) return sent;
    const timer = setTimeout(() => this.context.interruptRunning(), this.cancelAfterMs);
    return sent.finally(() => clearTimeout(timer));
  }

  async runBatch(statements: readonly ParsedStatement[], options: RunOptions) {
    if (statements.some((statement) => statement.changesSession)) this.sessionChanged = true;
    const texts = statements.map((statement) => statement.sql);
    const batch = await this.watch(() => this.connection.runBatch(texts, options));
    this.noteFailure(batch.error);
    return batch;
  }

  async copyFrom(
    statement: ParsedStatement,
    source: AsyncIterable<Uint8Array>,
  ): Promise<Settled<StatementResult>> {
    const copy = await this.watch(() => {
      if (!this.connection.copyFrom) throw new Error('This connection provider cannot COPY FROM');
      return this.connection.copyFrom(statement.sql, source);
    });
    if (!copy.ok) this.noteFailure(copy.error);
    return copy;
  }

  async runText(sql: string): Promise<PortFailure | undefined> {
    const run = await this.watch(() => this.connection.run(sql, this.context.controlOptions));
    if (run.ok) return undefined;
    this.noteFailure(run.error);
    return run.error;
  }

  /**
   * The request's `timeoutMs` as a session setting (covering caller-managed scripts); its failure,
   * if any. Behind a transaction pooler statements are cancelled instead (docs/decisions.md 10.33).
   */
  applySessionTimeout(): Promise<PortFailure | undefined> | undefined {
    const { timeoutMs } = this.context.options;
    // Nothing to await without a timeout: each await costs a turn of the event loop.
    if (timeoutMs === undefined) return undefined;
    const verdict = this.connection.sessionStateVerdict?.();
    if (!verdict) return this.setSessionTimeout(timeoutMs);
    // Not known to be kept (docs/decisions.md 10.32): cancelling keeps the timeout on any target,
    // so the request runs, whatever the probe found.
    return verdict.then(({ kind }) => {
      if (kind === 'kept') return this.setSessionTimeout(timeoutMs);
      this.cancelAfterMs = timeoutMs;
      return undefined;
    });
  }

  private setSessionTimeout(timeoutMs: number): Promise<PortFailure | undefined> {
    this.sessionChanged = true;
    return this.context.runControl(this, `SET statement_timeout = ${timeoutMs}`);
  }

  /**
   * Rolls back a transaction left open or failed; true when there was one. A failed ROLLBACK leaves
   * the answer as it was: the connection is cleaned at release, or closed.
   */
  async rollbackIfOpen(): Promise<boolean> {
    if (!this.mayHaveOpenTransaction()) return false;
    await this.context.runControl(this, 'ROLLBACK');
    return true;
  }

  /** Whether rollbackIfOpen has anything to do: known without a turn of the event loop. */
  mayHaveOpenTransaction(): boolean {
    return !this.broken && this.connection.transactionStatus() !== 'idle';
  }

  /** A failure broke the connection or ended its session: it cannot be used again. */
  get isBroken(): boolean {
    return this.broken;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const giveBack = (): void => {
      const open = !this.broken && this.connection.transactionStatus() !== 'idle';
      this.connection.release({ destroy: this.broken, resetSession: this.sessionChanged || open });
    };
    // A CancelRequest still on its way could stop the next user's statement.
    const cancels = this.context.cancelsSettled();
    if (cancels) void cancels.then(giveBack);
    else giveBack();
  }

  /** The connection cannot be used after a failure that broke it or ended the session (FATAL). */
  private noteFailure(error: PortFailure | undefined): void {
    if (error && endsConnection(error)) this.broken = true;
  }

  /** A call that rejects is a defect (docs/decisions.md 10.21): the connection is not trusted again. */
  private async watch<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (defect) {
      this.broken = true;
      throw defect;
    }
  }
}

/** A failure that broke the connection or ended its session (FATAL, PANIC, a lost socket). */
function endsConnection(error: PortFailure): boolean {
  if (error instanceof DatabaseError) {
    const severity = error.fields.severity;
    return severity === 'FATAL' || severity === 'PANIC';
  }
  return error instanceof ConnectionError;
}
