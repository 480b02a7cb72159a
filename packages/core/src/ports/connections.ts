/**
 * The connection port: the small surface core needs from a PostgreSQL driver. Core never imports pg;
 * `@sqlgate/postgres-adapter` implements these interfaces.
 */
import type { DatabaseError } from '../errors';

/** DECISIONS.md section 7. `prefer` is the default. */
export type SslMode = 'disable' | 'require' | 'prefer' | 'verify-full';

export const SSL_MODES: readonly SslMode[] = ['disable', 'require', 'prefer', 'verify-full'];

/** Where to connect and as whom. Built from the documented request fields only. */
export interface ConnectionTarget {
  host: string;
  port: number;
  user: string;
  /** Absent means no password is sent (never the service's own PGPASSWORD or ~/.pgpass). */
  password?: string;
  database: string;
  sslMode: SslMode;
}

/** `object`: rows keyed by column name (SPEC). `array`: rows as arrays, no loss on duplicate names. */
export type RowMode = 'object' | 'array';

/** Column metadata: what the server described, plus the type's name. */
export interface FieldDescription {
  name: string;
  dataTypeID: number;
  /** `int4`, `timestamptz`, or the custom type's name. */
  dataTypeName: string;
  tableID: number;
  columnID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: 'text' | 'binary';
}

/** What one statement produced. */
export interface StatementResult {
  /** Command tag verb (SELECT, INSERT...); null when the server sent none (empty or truncated). */
  command: string | null;
  /** Rows affected or returned, from the command tag; null when the server sent none. */
  rowCount: number | null;
  /** Empty when the statement returns no rows. */
  fields: FieldDescription[];
  rows: unknown[];
  /** More rows existed than `maxRows`; only the first `maxRows` are in `rows`. */
  truncated: boolean;
  /**
   * Milliseconds the server took on it, when the adapter could tell (statements sent together in
   * one round trip cannot be timed from outside one by one).
   */
  durationMs?: number;
}

/** Statements sent together: the results of those that ran, and the error that stopped the rest. */
export interface BatchResult {
  results: StatementResult[];
  /** Statement `results.length` failed (or a control statement: see DatabaseError.failedStep). */
  error?: DatabaseError;
}

export interface RunOptions {
  /** Bound to $1..$n. */
  params?: readonly unknown[];
  rowMode: RowMode;
  /** At most this many rows are read; the rest stay in the server. */
  maxRows: number;
  /**
   * sqlgate's own control statements (BEGIN, SET LOCAL) sent before the statement in the same round
   * trip. If one fails, the statement does not run.
   */
  before?: readonly string[];
  /**
   * Control statements (COMMIT) sent after it in the same round trip; they do not run when the
   * statement fails, which leaves its transaction failed.
   */
  after?: readonly string[];
}

/** What the server reports about the transaction after each statement. */
export type TransactionStatus = 'idle' | 'in-transaction' | 'failed';

/** One pooled connection, lent to one request at a time. */
export interface Connection {
  /**
   * Runs one statement. Rejects with `DatabaseError` when PostgreSQL refuses it, and with
   * `ConnectionError` when the connection breaks.
   */
  run(sql: string, options: RunOptions): Promise<StatementResult>;
  /**
   * Runs statements in order in one round trip. A DatabaseError stops the batch and is returned
   * with the results before it; the server skips everything after it up to the end of the batch.
   * Rejects with `ConnectionError` when the connection breaks.
   */
  runBatch(sql: readonly string[], options: RunOptions): Promise<BatchResult>;
  /** The transaction state the server reported after the last statement. */
  transactionStatus(): TransactionStatus;
  /** Asks the server to cancel the statement running on this connection (a CancelRequest). */
  cancel(): Promise<void>;
  /**
   * Gives the connection back. With `resetSession`, the session is cleaned first (ROLLBACK when a
   * transaction is open, then DISCARD ALL) and the connection is destroyed if that fails; the
   * cleaning may finish after this returns, but always before the connection is lent again.
   * With `destroy`, the connection is closed instead of returned.
   */
  release(options?: { resetSession?: boolean; destroy?: boolean }): void;
}

/** One entry of GET /api/stats/pools (SPEC's PoolStat). */
export interface PoolStat {
  /** `host:port:user:database`. */
  poolId: string;
  totalConnections: number;
  idleConnections: number;
  activeConnections: number;
  waitingClients: number;
}

export interface AcquireOptions {
  /** Aborting gives up waiting for a connection. */
  signal?: AbortSignal;
}

/** Outcome of a one-off connection check (POST /api/test-connection). */
export interface ConnectionCheck {
  serverVersion: string;
  database: string;
  user: string;
  ssl: boolean;
  latencyMs: number;
}

/** Lends connections to targets; owns the pools behind them. */
export interface ConnectionProvider {
  /** Rejects with `ConnectionError` (or `DatabaseError` for authentication failures). */
  acquire(target: ConnectionTarget, options?: AcquireOptions): Promise<Connection>;
  /** Connects once, outside the pools, and reports what it found. */
  check(target: ConnectionTarget): Promise<ConnectionCheck>;
  /** Never touches a database. */
  poolStats(): PoolStat[];
  /**
   * A key naming the target and its credentials without revealing the password (the pool key):
   * the result cache scopes entries by it, so one user never sees another user's rows.
   */
  scopeOf(target: ConnectionTarget): string;
  /** Ends every pool. Idempotent. */
  close(): Promise<void>;
}
