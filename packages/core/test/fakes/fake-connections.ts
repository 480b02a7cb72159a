/**
 * A scriptable in-memory ConnectionProvider for core's tests: no pg, no server. Tests script what a
 * statement does (rows, command tag, DatabaseError, ConnectionError, a delay, a call that never
 * settles, a transaction status) per SQL text or per call, and how acquire behaves; the fake
 * records every call so a test can assert what reached the "server" and how connections came back.
 *
 * It honours the port's documented contract (src/ports/connections.ts), checked by the same suite
 * that runs against the pg adapter (test/contract): calls settle with values, runBatch returns the
 * results before the failing statement plus the error, and nothing after the error runs (`after`
 * included); only a defect (a connection used after release) rejects. It models the few
 * pieces of PostgreSQL behaviour that the contract and the strategies depend on: BEGIN / COMMIT /
 * ROLLBACK move the transaction status, an error inside a transaction leaves it failed (and refuses
 * further statements with 25P02 until it ends), SET / SHOW / DISCARD ALL keep session settings, and
 * a CancelRequest ends a delayed statement with 57014. Everything else is what the test scripts.
 */
import { isPortFailure, type Settled } from '../../src/ports/settled';
import {
  ConnectionError,
  DatabaseError,
  ErrorCodes,
  RequestError,
  type DatabaseErrorFields,
  type FailedStep,
} from '../../src/errors';
import type {
  AcquireOptions,
  CacheScope,
  BatchResult,
  Connection,
  ConnectionCheck,
  ConnectionProvider,
  ConnectionTarget,
  FieldDescription,
  PoolStat,
  RunOptions,
  StatementResult,
  TransactionStatus,
} from '../../src/ports/connections';

/** Which statements a rule applies to: the exact text (trimmed), a pattern, or a predicate. */
export type StatementMatcher = string | RegExp | ((sql: string) => boolean);

/** What one statement does on the fake server. */
export interface ScriptedOutcome {
  /** Rows as objects (column name to value) or arrays in `columns` order. */
  rows?: readonly (Record<string, unknown> | readonly unknown[])[];
  /** Column names, for array rows or a result without rows; default: the first object row's keys. */
  columns?: readonly string[];
  /** Full field descriptions, when a test needs exact metadata. */
  fields?: readonly FieldDescription[];
  /** The command tag's verb; default: the statement's first word, upper case. */
  command?: string | null;
  /** The command tag's count; default: every scripted row for commands that return rows, else null. */
  rowCount?: number | null;
  /** Reported per statement, as the adapter does for statements of one round trip. */
  durationMs?: number;
  /**
   * The statement fails: a DatabaseError is the server's answer, a ConnectionError breaks the
   * connection, a RequestError is a parameter the adapter could not send; anything else is a
   * defect and rejects the call.
   */
  error?: Error;
  /** Milliseconds before the server answers; a CancelRequest ends the wait with 57014. */
  delayMs?: number;
  /** The server never answers (a frozen backend). Only `kill` ends the call. */
  hang?: boolean;
  /**
   * CancelRequests the statement ignores before one stops it, as PostgreSQL ignores one that
   * reaches the backend before it has read the statement.
   */
  ignoredCancels?: number;
  /** The transaction status after the statement, overriding the modelled one. */
  status?: TransactionStatus;
}

/** An outcome, or a function of the statement and its options (e.g. to echo `params`). */
export type Script = ScriptedOutcome | ((sql: string, options: RunOptions) => ScriptedOutcome);

/** How one acquire behaves. */
export type AcquireScript =
  | { error: Error }
  /** Waits until the request's AbortSignal fires, then rejects as the pg adapter does. */
  | { waitForAbort: true }
  | { delayMs: number };

/** A call the fake received, in order. */
export type FakeCall =
  | { kind: 'acquire'; target: ConnectionTarget; withSignal: boolean }
  | { kind: 'run'; connection: number; sql: string; options: RunOptions }
  | { kind: 'runBatch'; connection: number; sql: readonly string[]; options: RunOptions }
  | { kind: 'cancel'; connection: number }
  | {
      kind: 'release';
      connection: number;
      options: { resetSession?: boolean; destroy?: boolean };
    };

/** A statement the fake server executed (skipped statements of a failed batch are not). */
export interface ExecutedStatement {
  connection: number;
  sql: string;
  /** `reset`: the cleaning a `release({ resetSession })` does. */
  via: 'run' | 'runBatch' | 'reset';
}

/** A PostgreSQL error as the adapter builds it. */
export function databaseError(
  code: string,
  message: string,
  fields: Partial<DatabaseErrorFields> = {},
): DatabaseError {
  return new DatabaseError({ message, code, severity: 'ERROR', ...fields });
}

/** The connection broke while a statement ran (the server or the network went away). */
export function connectionLost(
  message = 'Connection terminated unexpectedly',
  systemCode = 'ECONNRESET',
): ConnectionError {
  return new ConnectionError(ErrorCodes.CONNECTION_FAILED, message, systemCode);
}

/** What the pg adapter rejects acquire with when the request's signal aborts. */
function acquireAborted(): ConnectionError {
  return new ConnectionError(ErrorCodes.CONNECTION_FAILED, 'The request was aborted', 'ABORTED');
}

function queryCanceled(): DatabaseError {
  return databaseError('57014', 'canceling statement due to user request');
}

function transactionAborted(): DatabaseError {
  return databaseError(
    '25P02',
    'current transaction is aborted, commands ignored until end of transaction block',
  );
}

/** The same server error, placed at the step of the round trip that failed. */
function atStep(error: DatabaseError, failedStep: FailedStep): DatabaseError {
  return error.failedStep === failedStep
    ? error
    : new DatabaseError(error.fields, { cause: error, failedStep });
}

const TYPE_OF: Record<string, { name: string; oid: number }> = {
  integer: { name: 'int4', oid: 23 },
  number: { name: 'float8', oid: 701 },
  boolean: { name: 'bool', oid: 16 },
  string: { name: 'text', oid: 25 },
};

/** A field description for a column whose first value is `sample`. */
export function fieldFor(name: string, sample?: unknown): FieldDescription {
  const kind = typeof sample === 'number' && Number.isInteger(sample) ? 'integer' : typeof sample;
  const type = TYPE_OF[kind] ?? { name: 'text', oid: 25 };
  return {
    name,
    dataTypeID: type.oid,
    dataTypeName: type.name,
    tableID: 0,
    columnID: 0,
    dataTypeSize: type.oid === 23 ? 4 : -1,
    dataTypeModifier: -1,
    format: 'text',
  };
}

/** Commands whose tag carries no count. */
const NO_COUNT = new Set([
  'BEGIN',
  'START',
  'COMMIT',
  'END',
  'ROLLBACK',
  'SET',
  'SHOW',
  'DISCARD',
  'RESET',
  'SAVEPOINT',
  'RELEASE',
]);

function firstWord(sql: string): string {
  return /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? '';
}

function matches(matcher: StatementMatcher, sql: string): boolean {
  if (typeof matcher === 'string') return matcher.trim() === sql.trim();
  if (matcher instanceof RegExp) return matcher.test(sql);
  return matcher(sql);
}

interface Rule {
  matcher: StatementMatcher;
  script: Script;
  /** Uses left; undefined: forever. */
  remaining?: number;
}

/**
 * The modelled part of PostgreSQL: transaction control and session settings. Returns undefined for
 * statements the model does not know (they do what the script says, or succeed with no rows).
 */
function modelled(sql: string, connection: FakeConnection): ScriptedOutcome | undefined {
  const text = sql.trim().replace(/;$/, '');
  const verb = firstWord(text);
  if (verb === 'BEGIN' || /^start\s+transaction/i.test(text)) {
    return { command: verb === 'BEGIN' ? 'BEGIN' : 'START TRANSACTION', status: 'in-transaction' };
  }
  if (verb === 'COMMIT' || verb === 'END') {
    // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK.
    const failed = connection.status === 'failed';
    return { command: failed ? 'ROLLBACK' : 'COMMIT', status: 'idle' };
  }
  if (verb === 'ROLLBACK' && !/^rollback\s+(work\s+|transaction\s+)?to\b/i.test(text)) {
    return { command: 'ROLLBACK', status: 'idle' };
  }
  if (/^discard\s+all$/i.test(text)) {
    connection.settings.clear();
    return { command: 'DISCARD ALL' };
  }
  const set = /^set\s+(session\s+|local\s+)?([A-Za-z_.]+)\s*(?:=|\s+to\s+)\s*(.+)$/i.exec(text);
  if (set) {
    const [, scope, name, value] = set as unknown as [string, string | undefined, string, string];
    // SET LOCAL ends with the transaction: nothing for a later request to see.
    if (scope?.trim().toLowerCase() !== 'local') {
      connection.settings.set(name.toLowerCase(), value.replace(/^'(.*)'$/, '$1'));
    }
    return { command: 'SET' };
  }
  const show = /^show\s+([A-Za-z_.]+)$/i.exec(text);
  if (show) {
    const name = (show[1] as string).toLowerCase();
    return { command: 'SHOW', rows: [{ [name]: connection.settings.get(name) ?? '' }] };
  }
  return undefined;
}

/** A connection of the fake provider. Its server is the provider's script. */
export class FakeConnection implements Connection {
  status: TransactionStatus = 'idle';
  /** Session settings (SET), until DISCARD ALL. */
  readonly settings = new Map<string, string>();
  broken = false;
  destroyed = false;
  lent = false;
  /** The in-flight step's way out: cancel and kill end it early. */
  private interrupt: ((error: Error) => void) | undefined;
  private cancelable = false;
  private cancelsToIgnore = 0;

  constructor(
    readonly id: number,
    readonly target: ConnectionTarget,
    private readonly provider: FakeConnectionProvider,
  ) {}

  async run(sql: string, options: RunOptions): Promise<Settled<StatementResult>> {
    this.provider.calls.push({ kind: 'run', connection: this.id, sql, options });
    const { results, error } = await this.roundTrip([sql], options, 'run');
    return error ? { ok: false, error } : { ok: true, value: results[0] as StatementResult };
  }

  runBatch(sql: readonly string[], options: RunOptions): Promise<BatchResult> {
    this.provider.calls.push({ kind: 'runBatch', connection: this.id, sql: [...sql], options });
    return this.roundTrip(sql, options, 'runBatch');
  }

  transactionStatus(): TransactionStatus {
    return this.status;
  }

  async cancel(): Promise<void> {
    this.provider.calls.push({ kind: 'cancel', connection: this.id });
    // A CancelRequest stops a statement that is running; a frozen backend does not answer it.
    if (!this.cancelable) return;
    if (this.cancelsToIgnore > 0) this.cancelsToIgnore -= 1;
    else this.interrupt?.(queryCanceled());
  }

  release(options: { resetSession?: boolean; destroy?: boolean } = {}): void {
    this.provider.calls.push({ kind: 'release', connection: this.id, options: { ...options } });
    if (!this.lent) return;
    this.lent = false;
    this.provider.returned(this, options);
  }

  /** The connection breaks: the statement in flight (if any) rejects with `error`. */
  kill(error: Error = connectionLost()): void {
    this.broken = true;
    this.interrupt?.(error);
  }

  /** Runs the cleaning of `release({ resetSession })`: ROLLBACK if needed, then DISCARD ALL. */
  async reset(): Promise<void> {
    const steps = this.status === 'idle' ? ['DISCARD ALL'] : ['ROLLBACK', 'DISCARD ALL'];
    for (const sql of steps) {
      const { error } = await this.roundTrip([sql], { rowMode: 'array', maxRows: 0 }, 'reset');
      if (error) throw error;
    }
  }

  private async roundTrip(
    sql: readonly string[],
    options: RunOptions,
    via: ExecutedStatement['via'],
  ): Promise<BatchResult> {
    if (this.destroyed || (!this.lent && via !== 'reset')) {
      throw new Error(`fake connection ${this.id} used after release`);
    }
    if (this.broken) return { results: [], error: connectionLost('Connection terminated') };
    const steps: { sql: string; step: FailedStep; index: number }[] = [
      ...(options.before ?? []).map((text) => ({ sql: text, step: 'before' as const, index: -1 })),
      ...sql.map((text, index) => ({ sql: text, step: 'statement' as const, index })),
      ...(options.after ?? []).map((text) => ({ sql: text, step: 'after' as const, index: -1 })),
    ];
    const results: StatementResult[] = [];
    const executedBefore = this.provider.executed.length;
    const statusBefore = this.status;
    for (const { sql: text, step, index } of steps) {
      const outcome = this.outcomeFor(text, options);
      try {
        await this.wait(outcome);
      } catch (error) {
        // Killed while it ran: the statements before it stand, as the port says.
        if (!(error instanceof ConnectionError)) throw error;
        return { results, error };
      }
      this.provider.executed.push({ connection: this.id, sql: text, via });
      const error = outcome.error;
      if (error) {
        if (error instanceof RequestError) {
          // The adapter refuses parameters before it sends anything: nothing of the round trip ran.
          this.provider.executed.splice(executedBefore);
          this.status = statusBefore;
          return { results: [], error };
        }
        if (error instanceof ConnectionError) {
          this.broken = true;
          return { results, error };
        }
        // Anything but a server's answer is a defect: it rejects the whole call.
        if (!(error instanceof DatabaseError)) throw error;
        const severity = error.fields.severity;
        if (severity === 'FATAL' || severity === 'PANIC') this.broken = true;
        // A failed COMMIT still ends the transaction; any other error inside one leaves it failed.
        const ends = /^(commit|end)\b/i.test(text.trim());
        this.status = outcome.status ?? (ends || this.status === 'idle' ? 'idle' : 'failed');
        // The server skips every later step of the round trip, `after` included.
        return { results, error: atStep(error, step) };
      }
      if (outcome.status) this.status = outcome.status;
      if (step === 'statement') results.push(shapeResult(text, outcome, options, index));
    }
    return { results };
  }

  private outcomeFor(sql: string, options: RunOptions): ScriptedOutcome {
    const text = sql.trim();
    const ending = /^(rollback|commit|end)\b/i.test(text);
    if (this.status === 'failed' && !ending) return { error: transactionAborted() };
    const script = this.provider.scriptFor(sql);
    const scripted = typeof script === 'function' ? script(sql, options) : script;
    const model = modelled(sql, this);
    const outcome = { ...model, ...scripted };
    // A statement that fails moves the transaction only as the script says (or as errors do).
    if (scripted.error && scripted.status === undefined) delete outcome.status;
    return outcome;
  }

  private async wait(outcome: ScriptedOutcome): Promise<void> {
    if (!outcome.hang && !outcome.delayMs) return;
    this.cancelable = !outcome.hang;
    this.cancelsToIgnore = outcome.ignoredCancels ?? 0;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = outcome.hang ? undefined : setTimeout(resolve, outcome.delayMs);
        this.interrupt = (error) => {
          if (timer) clearTimeout(timer);
          reject(error);
        };
      });
    } catch (error) {
      if (error instanceof DatabaseError) {
        // Cancelled: the statement fails as the server would say, the round trip stops here.
        outcome.error = error;
        return;
      }
      throw error;
    } finally {
      this.interrupt = undefined;
      this.cancelable = false;
    }
  }
}

/** Rows in the requested mode, cut at `maxRows` and at the request's byte budget. */
function shapeResult(
  sql: string,
  outcome: ScriptedOutcome,
  options: RunOptions,
  index: number,
): StatementResult {
  const scriptedRows = outcome.rows ?? [];
  const first = scriptedRows[0];
  const columns =
    outcome.fields?.map((field) => field.name) ??
    outcome.columns ??
    (first && !Array.isArray(first) ? Object.keys(first) : []);
  const asArray = (row: Record<string, unknown> | readonly unknown[]): unknown[] =>
    Array.isArray(row) ? [...row] : columns.map((name) => (row as Record<string, unknown>)[name]);
  const arrays = scriptedRows.map(asArray);
  const fields =
    outcome.fields?.map((field) => ({ ...field })) ??
    columns.map((name, column) => fieldFor(name, arrays[0]?.[column]));
  const rows: unknown[] = [];
  let truncatedBy: 'rows' | 'bytes' | undefined;
  for (const values of arrays) {
    if (rows.length >= options.maxRows) {
      truncatedBy = 'rows';
      break;
    }
    const row =
      options.rowMode === 'array'
        ? values
        : Object.fromEntries(columns.map((name, column) => [name, values[column]]));
    if (options.budget) {
      const bytes = Buffer.byteLength(JSON.stringify(row));
      if (bytes > options.budget.remainingBytes) {
        truncatedBy = 'bytes';
        break;
      }
      options.budget.remainingBytes -= bytes;
    }
    rows.push(row);
  }
  const verb = outcome.command === undefined ? firstWord(sql) : outcome.command;
  const stoppedEarly = truncatedBy !== undefined && options.stopEarly?.[index] === true;
  const counted = verb !== null && !NO_COUNT.has(verb);
  const tagCount =
    outcome.rowCount === undefined ? (counted ? arrays.length : null) : outcome.rowCount;
  return {
    // A read stopped early never reaches its command tag: the adapter counts the rows it kept.
    command: stoppedEarly ? null : verb,
    rowCount: stoppedEarly ? (fields.length > 0 ? rows.length : null) : tagCount,
    fields,
    rows,
    truncated: truncatedBy !== undefined,
    ...(truncatedBy ? { truncatedBy } : {}),
    ...(outcome.durationMs === undefined ? {} : { durationMs: outcome.durationMs }),
  };
}

/** The fake provider: one pool per target scope, connections reused most recent first. */
export class FakeConnectionProvider implements ConnectionProvider {
  /** Every call, in order. */
  readonly calls: FakeCall[] = [];
  /** Every statement the server executed, in order, on any connection. */
  readonly executed: ExecutedStatement[] = [];
  readonly connections: FakeConnection[] = [];
  /** Most connections lent at the same time. */
  maxLent = 0;
  closed = false;
  private readonly rules: Rule[] = [];
  private readonly acquireScripts: AcquireScript[] = [];
  private readonly idle: FakeConnection[] = [];
  private readonly cleanings = new Set<Promise<void>>();

  /** Every statement matching `matcher` does what `script` says (the latest matching rule wins). */
  on(matcher: StatementMatcher, script: Script): this {
    this.rules.unshift({ matcher, script });
    return this;
  }

  /** The next `times` statements matching `matcher` do what `script` says; then earlier rules apply. */
  once(matcher: StatementMatcher, script: Script, times = 1): this {
    this.rules.unshift({ matcher, script, remaining: times });
    return this;
  }

  /** The next acquire behaves as `script` says (queued: one script per acquire). */
  onAcquire(script: AcquireScript): this {
    this.acquireScripts.push(script);
    return this;
  }

  /** @internal The script for one statement, consuming a use of a `once` rule. */
  scriptFor(sql: string): Script {
    const index = this.rules.findIndex((rule) => matches(rule.matcher, sql));
    const rule = this.rules[index];
    if (!rule) return {};
    if (rule.remaining !== undefined && --rule.remaining === 0) this.rules.splice(index, 1);
    return rule.script;
  }

  async acquire(
    target: ConnectionTarget,
    options: AcquireOptions = {},
  ): Promise<Settled<Connection>> {
    this.calls.push({ kind: 'acquire', target, withSignal: options.signal !== undefined });
    const { signal } = options;
    if (signal?.aborted) return { ok: false, error: acquireAborted() };
    const script = this.acquireScripts.shift();
    if (script && 'error' in script) {
      if (!isPortFailure(script.error)) throw script.error;
      return { ok: false, error: script.error };
    }
    if (script && !('error' in script)) {
      // Waiting for a pooled connection: an abort gives up the wait (AcquireOptions.signal).
      const aborted = await new Promise<boolean>((resolve) => {
        const timer =
          'delayMs' in script ? setTimeout(() => resolve(false), script.delayMs) : undefined;
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve(true);
          },
          { once: true },
        );
        // waitForAbort without a signal waits forever, as a pool without a timeout would.
      });
      if (aborted) return { ok: false, error: acquireAborted() };
    }
    // A connection being cleaned is lent again only once clean (the port's promise).
    await this.settled();
    const scope = this.poolKeyOf(target);
    let index = this.idle.length - 1;
    while (index >= 0 && this.poolKeyOf((this.idle[index] as FakeConnection).target) !== scope)
      index--;
    const connection =
      index >= 0
        ? (this.idle.splice(index, 1)[0] as FakeConnection)
        : new FakeConnection(this.connections.length + 1, target, this);
    if (index < 0) this.connections.push(connection);
    connection.lent = true;
    this.maxLent = Math.max(this.maxLent, this.lentCount());
    return { ok: true, value: connection };
  }

  /** @internal A connection came back. */
  returned(
    connection: FakeConnection,
    options: { resetSession?: boolean; destroy?: boolean },
  ): void {
    if (options.destroy || connection.broken) {
      connection.destroyed = true;
      return;
    }
    if (!options.resetSession) {
      this.idle.push(connection);
      return;
    }
    const cleaning = connection
      .reset()
      .then(
        () => void this.idle.push(connection),
        () => void (connection.destroyed = true),
      )
      .finally(() => this.cleanings.delete(cleaning));
    this.cleanings.add(cleaning);
  }

  /** Resolves once every session cleaning has finished. */
  async settled(): Promise<void> {
    while (this.cleanings.size > 0) await Promise.all([...this.cleanings]);
  }

  async check(target: ConnectionTarget): Promise<Settled<ConnectionCheck>> {
    const value = {
      serverVersion: '16.0 (fake)',
      database: target.database,
      user: target.user,
      ssl: false,
      latencyMs: 0,
    };
    return { ok: true, value };
  }

  poolStats(): PoolStat[] {
    const scopes = new Map<string, FakeConnection[]>();
    for (const connection of this.connections) {
      if (connection.destroyed) continue;
      const scope = this.poolKeyOf(connection.target);
      scopes.set(scope, [...(scopes.get(scope) ?? []), connection]);
    }
    return [...scopes].map(([poolId, members]) => {
      const active = members.filter((each) => each.lent).length;
      return {
        poolId,
        totalConnections: members.length,
        idleConnections: members.length - active,
        activeConnections: active,
        waitingClients: 0,
      };
    });
  }

  /**
   * What `spareConnections` answers for every target: undefined (the default) as a provider that
   * cannot tell, a number as a pool with that many connections to lend without a wait.
   */
  spare: number | undefined;

  spareConnections(): number | undefined {
    return this.spare;
  }

  /** The cache scope: the database as spelled (the fake resolves nothing) and the user. */
  scopeOf(target: ConnectionTarget): Promise<Settled<CacheScope>> {
    const server = `${target.host}:${target.port}`;
    const value = {
      server,
      database: `${server}/${target.database}`,
      credentials: `${target.user}/${fingerprint(target.password ?? '')}`,
    };
    return Promise.resolve({ ok: true, value });
  }

  /** `host:port:user:database`, the pool a connection belongs to. */
  poolKeyOf(target: ConnectionTarget): string {
    return `${target.host}:${target.port}:${target.user}:${target.database}`;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Connections lent right now. */
  lentCount(): number {
    return this.connections.filter((each) => each.lent).length;
  }

  /**
   * SQL texts the requests sent and the server executed, in order (the cleaning of released
   * connections is left out: see `resets`); on one connection when `connection` is given.
   */
  sent(connection?: number): string[] {
    return this.executed
      .filter((each) => each.via !== 'reset')
      .filter((each) => connection === undefined || each.connection === connection)
      .map((each) => each.sql);
  }

  /** SQL texts of the session cleanings (ROLLBACK, DISCARD ALL), in order. */
  resets(): string[] {
    return this.executed.filter((each) => each.via === 'reset').map((each) => each.sql);
  }

  /** The release calls, in order. */
  releases(): Extract<FakeCall, { kind: 'release' }>[] {
    return this.calls.filter(
      (call): call is Extract<FakeCall, { kind: 'release' }> => call.kind === 'release',
    );
  }

  /** Calls of one kind, in order. */
  callsOf<K extends FakeCall['kind']>(kind: K): Extract<FakeCall, { kind: K }>[] {
    return this.calls.filter((call): call is Extract<FakeCall, { kind: K }> => call.kind === kind);
  }
}

/** A connection target for the fake (nothing connects to it). */
export const fakeTarget: ConnectionTarget = {
  host: 'fake.invalid',
  port: 5432,
  user: 'tester',
  password: 'secret',
  database: 'app',
  sslMode: 'disable',
};

/** A short stand-in for the adapter's keyed hash: the scope never shows the password itself. */
function fingerprint(text: string): string {
  let hash = 5381;
  for (let i = 0; i < text.length; i++) hash = (hash * 33 + text.charCodeAt(i)) >>> 0;
  return hash.toString(36);
}
