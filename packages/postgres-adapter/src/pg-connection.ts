/** The Connection port over one pooled pg client. */
import {
  ConnectionError,
  promiseFrom,
  RequestError,
  type BatchResult,
  type Connection,
  type DatabaseError,
  type RunOptions,
  type ServerSettings,
  type SessionStateVerdict,
  type Settled,
  type StatementResult,
  type TransactionStatus,
} from '@sqlgate/core';
import { randomBytes } from 'node:crypto';
import { askServer, BoundedQuery, RoundTripFailure } from './bounded-query';
import { CopyInQuery } from './copy-in-query';
import { sendCancelRequest } from './cancel-request';
import { ResultTooLarge } from './message-framing-errors';
import { toDomainError } from './pg-errors';
import type { PooledClient } from './pool-registry';
import { mayDropPreparedStatements } from './prepared-statements';
import { lostConnection } from './server-socket';
import { SilenceWatchdog } from './silence-watchdog';
import { StatementDelivery } from './statement-delivery';
import { CUSTOM_TYPES_SQL, type CustomType, type TypeRegistry } from './types/type-registry';

/** The terms of one loan from the pool. */
export interface Lending {
  /** Called once the client is back in the pool (or destroyed). */
  onReleased(): void;
  /** Another client of the same pool, for a first statement whose client turned out to be dead. */
  replace(): Promise<PooledClient>;
  /** Replacements allowed for one first statement: every idle client of the pool may be dead at once. */
  maxReplacements: number;
  /** Whether the pool's connections name the statements of reads (docs/decisions.md 10.30). */
  nameStatements: boolean;
  /** Whether the pool's target keeps session state for `client` (docs/decisions.md 10.32). */
  sessionStateVerdict(client: PooledClient): Promise<SessionStateVerdict>;
}

const TRANSACTION_STATUS: Record<string, TransactionStatus> = {
  I: 'idle',
  T: 'in-transaction',
  E: 'failed',
};

/** How long cleaning a connection may wait for the server before the connection is closed. */
const RESET_SILENCE_LIMIT_MS = 5000;

const NO_REPLACEMENT: Lending = {
  onReleased: () => undefined,
  replace: () => Promise.reject(new Error('no replacement client')),
  maxReplacements: 0,
  nameStatements: false,
  sessionStateVerdict: () => Promise.resolve({ kind: 'kept' }),
};

export class PgConnection implements Connection {
  private released = false;
  /** The client went back to the pool (a dead one) and no replacement came. */
  private clientGone = false;
  private statementsRun = 0;

  constructor(
    private client: PooledClient,
    private readonly types: TypeRegistry,
    private readonly lending: Lending = NO_REPLACEMENT,
  ) {}

  run(sql: string, options: RunOptions): Promise<Settled<StatementResult>> {
    // Chained, not awaited, here and in runOnce and send: each async function on a statement's
    // way costs every request one more turn of the microtasks.
    return this.runBatch([sql], options).then(settledOfOne);
  }

  /** Every failure is returned as the batch's error (docs/decisions.md 10.21). */
  runBatch(sql: readonly string[], options: RunOptions): Promise<BatchResult> {
    if (this.clientGone) return Promise.resolve({ results: [], error: goneClient() });
    const first = this.statementsRun++ === 0;
    return this.attemptBatch(sql, options, first, 0);
  }

  /** One attempt at a batch; a first round trip of which nothing ran tries another client. */
  private attemptBatch(
    sql: readonly string[],
    options: RunOptions,
    first: boolean,
    replacements: number,
  ): Promise<BatchResult> {
    const delivery = new StatementDelivery(this.client.serverSocket.framing.facts);
    return promiseFrom(() => this.runOnce(sql, options)).then(
      (results) => ({ results }),
      (error: unknown) => this.batchFailure(error, sql, options, first, delivery, replacements),
    );
  }

  private async batchFailure(
    error: unknown,
    sql: readonly string[],
    options: RunOptions,
    first: boolean,
    delivery: StatementDelivery,
    replacements: number,
  ): Promise<BatchResult> {
    if (error instanceof RequestError) return { results: [], error };
    // A fault sqlgate found (a broken protocol, a silent server) explains the break best.
    const fault = this.client.serverSocket.fault;
    const cause = fault ?? (error instanceof RoundTripFailure ? error.reason : error);
    const nothingRan = delivery.provesNothingRan(cause);
    // Only the first statement may move to another client: later ones depend on the session
    // (a transaction, SET) the earlier ones built on this client.
    if (first && nothingRan && replacements < this.lending.maxReplacements) {
      const replacementFailure = await this.replaceDeadClient(cause);
      if (replacementFailure) return { results: [], error: replacementFailure };
      return this.attemptBatch(sql, options, first, replacements + 1);
    }
    const step = error instanceof RoundTripFailure ? error.step : undefined;
    const domainError = toDomainError(cause, step, this.client.serverSocket);
    // The statements that completed before a failure may have committed: they are kept.
    const results = error instanceof RoundTripFailure ? error.completed : [];
    // Not when sqlgate itself stopped the statement for a COPY line it could not hold.
    const mayHaveRun = !nothingRan && step !== 'before' && !(cause instanceof ResultTooLarge);
    return { results, error: mayHaveRun ? statementMayHaveRun(domainError) : domainError };
  }

  async copyFrom(
    sql: string,
    source: AsyncIterable<Uint8Array>,
  ): Promise<Settled<StatementResult>> {
    if (this.clientGone) return { ok: false, error: goneClient() };
    this.statementsRun++;
    const query = new CopyInQuery(sql, source, this.client.serverSocket);
    try {
      query.start();
      return { ok: true, value: await query.done };
    } catch (error) {
      const { serverSocket } = this.client;
      return {
        ok: false,
        error: toDomainError(serverSocket.fault ?? error, undefined, serverSocket),
      };
    }
  }

  transactionStatus(): TransactionStatus {
    const status = this.client.serverSocket.framing.facts.transactionStatus;
    return status ? (TRANSACTION_STATUS[status] ?? 'idle') : 'idle';
  }

  serverSettings(): ServerSettings | undefined {
    const setting = this.client.serverSocket.framing.facts.parameters.get(
      'standard_conforming_strings',
    );
    return setting === undefined ? undefined : { standardConformingStrings: setting === 'on' };
  }

  /** docs/decisions.md 10.32. */
  sessionStateVerdict(): Promise<SessionStateVerdict> {
    return this.lending.sessionStateVerdict(this.client);
  }

  onClose(listener: () => void): () => void {
    const { serverSocket } = this.client;
    if (serverSocket.ended) {
      queueMicrotask(listener);
      return () => undefined;
    }
    serverSocket.once('close', listener);
    return () => serverSocket.off('close', listener);
  }

  async cancel(): Promise<void> {
    const { serverSocket } = this.client;
    const { processId, secretKey } = serverSocket.framing.facts;
    if (processId === null || secretKey === null) return;
    await sendCancelRequest(serverSocket.host, serverSocket.port, processId, secretKey);
  }

  abandon(): void {
    this.client.serverSocket.abort(
      Object.assign(
        new Error(
          'The server did not stop the statement when asked to cancel it; the connection was closed',
        ),
        { code: 'ABANDONED' },
      ),
    );
  }

  release(options: { resetSession?: boolean; destroy?: boolean } = {}): void {
    if (this.released) return;
    this.released = true;
    // A connection never goes back to the pool with its reading paused for a stream's reader.
    this.client.serverSocket.resumeReading();
    const { onReleased } = this.lending;
    if (this.clientGone) {
      onReleased();
      return;
    }
    if (options.destroy) {
      this.client.release(new Error('connection broke during a request'));
      onReleased();
      return;
    }
    if (!options.resetSession) {
      this.client.release();
      onReleased();
      return;
    }
    // The client stays out of the pool until its session is clean (docs/decisions.md 2.6).
    void this.resetSession()
      .then(
        () => this.client.release(),
        (error: unknown) =>
          this.client.release(error instanceof Error ? error : new Error(String(error))),
      )
      .finally(onReleased);
  }

  /**
   * One round trip, its nameable reads named on an idle connection (docs/decisions.md 10.30); sent
   * once more, prepared anew, when a name made it fail.
   */
  private runOnce(sql: readonly string[], options: RunOptions): Promise<StatementResult[]> {
    const { preparedStatements, serverSocket } = this.client;
    const nameable = mayNameStatements(sql, options);
    // A caller's DISCARD or DEALLOCATE (or sqlgate's own DISCARD ALL, 2.6) may drop the
    // connection's statements, whether or not its round trip succeeds: they are forgotten first.
    if (!nameable && droppingAny(sql, options)) preparedStatements.forgetAll();
    const named =
      nameable &&
      this.lending.nameStatements &&
      serverSocket.framing.facts.transactionStatus === 'I' &&
      // A streamed statement's rows are already with the consumer: only a lone statement, which
      // fails (if it does) before its first row, could be sent again.
      (!options.rowSink || sql.length === 1);
    const query = new BoundedQuery(sql, options, {
      types: this.types,
      socket: serverSocket,
      naming: { statements: preparedStatements, named },
    });
    return this.send(query, sql.length, options).then(undefined, (error: unknown) => {
      if (!query.failedForAName(error)) throw error;
      return this.sendRenewed(query, sql, options);
    });
  }

  /**
   * Sends a round trip again after a named statement made it fail, its names closed and parsed
   * anew. Safe: the failed statement never ran and those before it are proven reads; a transaction
   * the failure left failed is rolled back in the same write.
   */
  private async sendRenewed(
    failed: BoundedQuery,
    sql: readonly string[],
    options: RunOptions,
  ): Promise<StatementResult[]> {
    const { preparedStatements, serverSocket } = this.client;
    failed.refundBudget();
    // The failed round trip may have left its row limits set and reading paused.
    serverSocket.framing.resetRowLimits();
    serverSocket.resumeReading();
    const again =
      serverSocket.framing.facts.transactionStatus === 'I'
        ? options
        : { ...options, before: ['ROLLBACK', ...(options.before ?? [])] };
    const query = new BoundedQuery(sql, again, {
      types: this.types,
      socket: serverSocket,
      naming: { statements: preparedStatements, named: true, renew: true },
    });
    return this.send(query, sql.length, again);
  }

  /** Submits `query` and waits for its results, within the options' deadlines. */
  private send(
    query: BoundedQuery,
    statements: number,
    options: RunOptions,
  ): Promise<StatementResult[]> {
    const { silenceLimitMs } = options;
    if (silenceLimitMs !== undefined) {
      return this.watchedSend(query, silenceLimitMs, totalTimeLimit(statements, options));
    }
    return promiseFrom(() => {
      query.start();
      return query.done;
    }).then((results) => this.withCustomTypes(results, query));
  }

  /** `send` with a watchdog that ends the round trip when the server stays silent too long. */
  private async watchedSend(
    query: BoundedQuery,
    silenceLimitMs: number,
    totalLimitMs: ReturnType<typeof totalTimeLimit>,
  ): Promise<StatementResult[]> {
    const watchdog = new SilenceWatchdog(
      this.client.serverSocket,
      silenceLimitMs,
      totalLimitMs,
      () => void this.cancel().catch(() => undefined),
    );
    try {
      query.start();
      return await this.withCustomTypes(await query.done, query);
    } finally {
      watchdog.stop();
    }
  }

  /** `results`, once the types they name that the registry did not know were learnt. */
  private withCustomTypes(
    results: StatementResult[],
    query: BoundedQuery,
  ): StatementResult[] | Promise<StatementResult[]> {
    if (!this.types.anyUnknown(results)) return results;
    return this.learnCustomTypes(results, query).then(() => results);
  }

  /** The dead client leaves the pool for another; why no other could be had, if none could. */
  private async replaceDeadClient(
    cause: unknown,
  ): Promise<ConnectionError | DatabaseError | undefined> {
    this.client.release(cause instanceof Error ? cause : new Error(String(cause)));
    this.clientGone = true;
    try {
      this.client = await this.lending.replace();
    } catch (error) {
      // Nothing of the round trip was sent: like a failed BEGIN, not a failed statement.
      return toDomainError(error, 'before');
    }
    this.clientGone = false;
    return undefined;
  }

  /**
   * ROLLBACK when a transaction is open, DISCARD ALL and a new seed for random(), in one round
   * trip; a server silent past RESET_SILENCE_LIMIT_MS loses the connection.
   */
  private async resetSession(): Promise<void> {
    const steps = [
      ...(this.transactionStatus() === 'idle' ? [] : ['ROLLBACK']),
      'DISCARD ALL',
      reseedRandom(),
    ];
    await this.runOnce(steps, {
      rowMode: 'array',
      maxRows: 0,
      silenceLimitMs: RESET_SILENCE_LIMIT_MS,
    });
  }

  /** Names (and array parsers) of custom types, looked up once per pool. */
  private async learnCustomTypes(results: StatementResult[], query: BoundedQuery): Promise<void> {
    const unknown = this.types.unknown(
      results.flatMap((result) => result.fields.map((field) => field.dataTypeID)),
    );
    if (unknown.length === 0) return;
    let found;
    try {
      found = await askServer<{ oid: number; name: string; element: number }>(
        this.client.serverSocket,
        this.types,
        [CUSTOM_TYPES_SQL],
        [unknown],
      );
    } catch {
      return; // The statements succeeded; without the names their fields keep their OIDs as names.
    }
    const types = new Map<number, CustomType>();
    for (const row of found) types.set(row.oid, { name: row.name, elementOid: row.element });
    this.types.remember(types);
    for (const reader of query.statementReaders) reader.refreshTypeNames();
    for (const result of results) reparseCustomArrays(result, this.types, types);
  }
}

/** DISCARD ALL keeps a caller's setseed(): reseed with one nobody knows (docs/decisions.md 2.6). */
function reseedRandom(): string {
  // setseed() takes a float8 in [-1, 1]; 48 random bits fill its grid finely.
  const seed = randomBytes(6).readUIntBE(0, 6) / 2 ** 47 - 1;
  return `SELECT setseed(${seed})`;
}

/** A connection failure after the round trip reached the server (docs/decisions.md 10.5). */
function statementMayHaveRun(
  error: ConnectionError | DatabaseError,
): ConnectionError | DatabaseError {
  if (!(error instanceof ConnectionError) || error.statementMayHaveRun) return error;
  return new ConnectionError(error.code, error.message, error.systemCode, {
    cause: error.cause,
    statementMayHaveRun: true,
  });
}

/** The failure of a call on a connection whose client left the pool dead, with no replacement. */
function goneClient(): ConnectionError | DatabaseError {
  return toDomainError(lostConnection(), undefined, { ended: true });
}

/**
 * The round trip may name its statements (docs/decisions.md 10.30): all are `nameable`, and all
 * but the last stop early (10.4), so sending it again after a naming failure changes nothing.
 */
function mayNameStatements(sql: readonly string[], options: RunOptions): boolean {
  const { stopEarly, nameable } = options;
  if (sql.length === 0 || nameable === undefined) return false;
  const last = sql.length - 1;
  for (let index = 0; index <= last; index++) {
    if (nameable[index] !== true) return false;
    if (index < last && stopEarly?.[index] !== true) return false;
  }
  return true;
}

/** Some step of the round trip may drop prepared statements (DISCARD, DEALLOCATE). */
function droppingAny(sql: readonly string[], options: RunOptions): boolean {
  return (
    sql.some(mayDropPreparedStatements) ||
    (options.before?.some(mayDropPreparedStatements) ?? false) ||
    (options.after?.some(mayDropPreparedStatements) ?? false)
  );
}

/** The longest a round trip of `statements` may take with the options' step limit. */
function totalTimeLimit(statements: number, options: RunOptions): number | undefined {
  if (options.stepTimeLimitMs === undefined || options.silenceLimitMs === undefined)
    return undefined;
  const steps = statements + (options.before?.length ?? 0) + (options.after?.length ?? 0);
  // The silence limit already holds the grace beyond one step.
  return (steps - 1) * options.stepTimeLimitMs + options.silenceLimitMs;
}

/** Rows were read before the custom array types were known: their values are still array literals. */
function reparseCustomArrays(
  result: StatementResult,
  registry: TypeRegistry,
  learned: Map<number, CustomType>,
): void {
  result.fields.forEach((field, column) => {
    if ((learned.get(field.dataTypeID)?.elementOid ?? 0) === 0) return;
    const parse = registry.parserFor(field.dataTypeID);
    for (const row of result.rows as (unknown[] | Record<string, unknown>)[]) {
      const key = Array.isArray(row) ? column : field.name;
      const value = (row as Record<string | number, unknown>)[key];
      if (typeof value === 'string') (row as Record<string | number, unknown>)[key] = parse(value);
    }
  });
}

/** The outcome of a batch of one statement. */
function settledOfOne({ results, error }: BatchResult): Settled<StatementResult> {
  return error ? { ok: false, error } : { ok: true, value: results[0] as StatementResult };
}
