/**
 * The connection port: the small surface core needs from a PostgreSQL driver. Core never imports pg;
 * `@sqlgate/postgres-adapter` implements these interfaces.
 */
import type { AbortSignalLike } from './abort-signal';
import type { ConnectionError } from '../errors';
import type { PortFailure, Settled } from './settled';

/** docs/decisions.md 7. `prefer` is the default. */
export type SslMode = 'disable' | 'require' | 'prefer' | 'verify-full';

export const SSL_MODES: readonly SslMode[] = ['disable', 'require', 'prefer', 'verify-full'];

/** Where to connect and as whom. Built from the documented request fields only. */
export interface ConnectionTarget {
  /**
   * The name of a connection the server holds (CONFIG_FILE, docs/decisions.md 12): its pool is its
   * own, and stats, logs and metrics name it by this, never by its host and login.
   */
  name?: string;
  /**
   * Who a request on a named connection runs for (an API key's id, a JWT's subject): only the same
   * may cancel it by its id. Not part of its pool.
   */
  owner?: string;
  /** The server's name as the caller gave it: TLS checks the certificate against it; `poolId` shows it. */
  host: string;
  /** The address a `TargetPolicy` resolved and checked: connected to instead of resolving `host`. */
  address?: string;
  port: number;
  user: string;
  /** Absent means no password is sent (never the service's own PGPASSWORD or ~/.pgpass). */
  password?: string;
  database: string;
  sslMode: SslMode;
}

/**
 * A target's identity for the result cache (docs/decisions.md 10.20): entries are keyed by
 * `endpoint` and `credentials`; writes invalidate by `database`, or by `server` when they may
 * reach further.
 */
export interface CacheScope {
  /** The server reached, as it names itself: the same through every address, port and pooler. */
  server: string;
  /** The database reached on `server`, as the server names it. Writes invalidate by it. */
  database: string;
  /**
   * The database and how it was reached (address, port, name): what was read through a pooler is
   * not served through another way in. Absent: `database`.
   */
  endpoint?: string;
  /** The user and a keyed hash of the password; never the password itself. */
  credentials: string;
  /**
   * Reached by credentials the server holds, on a server tenants share (docs/decisions.md 12):
   * the statistics show its statements with their literals replaced by `$n`.
   */
  shared?: boolean;
}

/** `object`: rows keyed by column name (docs/interface.md). `array`: rows as arrays, no loss on duplicate names. */
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
  /** Not every row the statement produced is in `rows`. */
  truncated: boolean;
  /** Which limit cut `rows`: `maxRows`, or the request's byte bound (docs/decisions.md 10.2). */
  truncatedBy?: 'rows' | 'bytes';
  /** Milliseconds the server took on it, when the adapter could tell. */
  durationMs?: number;
  /** Parameter type OIDs (`$1` first), when the adapter asked for them (docs/decisions.md 10.36). */
  parameterTypes?: readonly number[];
}

/** Statements sent together: the results of those that ran, and the error that stopped the rest. */
export interface BatchResult {
  /** The statements that completed, in order (before a lost connection too: they may have committed). */
  results: StatementResult[];
  /**
   * Statement `results.length` or a control statement failed (DatabaseError.failedStep), the
   * connection broke, or the parameters could not be sent.
   */
  error?: PortFailure;
}

/** Bytes of row data a request may still return; shared by all its statements and connections. */
export interface ResultBudget {
  remainingBytes: number;
}

/**
 * Receives a round trip's rows as they arrive instead of keeping them (docs/decisions.md 10.22):
 * the results then hold no rows. `position` is the statement's place in the call's `sql` list.
 */
export interface RowSink {
  /** The statement's columns, before its first row (statements without rows have none). */
  describe(position: number, fields: FieldDescription[]): void;
  /**
   * Asked before a row is read, with its wire size: false drops it and the statement's later rows
   * unread, `truncatedBy: 'bytes'` (docs/decisions.md 10.2). Without `admit`, every row is taken.
   */
  admit?(bytes: number): boolean;
  /** One row and its bytes. False when the consumer holds enough: reading pauses until `drained()`. */
  row(position: number, row: unknown, bytes: number): boolean;
  /**
   * COPY ... TO STDOUT data, valid only during the call. Without this method COPY data is a
   * protocol fault. Returns false as `row` does.
   */
  copyData?(position: number, data: Uint8Array): boolean;
  /** Resolves once the consumer wants rows again (at once when it is gone). */
  drained(): Promise<void>;
  /** The statement finished: its command tag, row count and time (its `rows` are empty). */
  complete(position: number, result: StatementResult): void;
}

export interface RunOptions {
  /** Rows go here as they arrive, with backpressure, and are not kept; `budget` does not apply. */
  rowSink?: RowSink;
  /** Every value as PostgreSQL sent it: its text, or null (a CSV or a Neon-compatible answer). */
  textValues?: boolean;
  /** With `rowSink`: a larger row is dropped unread, truncating by bytes (docs/decisions.md 10.22). */
  maxRowBytes?: number;
  /** Bound to $1..$n. */
  params?: readonly unknown[];
  /** Per statement of the round trip, its own values (a batch); where absent, `params`. */
  batchParams?: readonly (readonly unknown[] | undefined)[];
  rowMode: RowMode;
  /** At most this many rows are kept per statement. */
  maxRows: number;
  /** Row bytes the request may still return; rows past it are dropped (docs/decisions.md 10.2). */
  budget?: ResultBudget;
  /**
   * Per statement: true when it is a read proven free of side effects, which may be stopped at its
   * limits; others run to completion (docs/decisions.md 10.4). Absent: all run to completion.
   */
  stopEarly?: readonly boolean[];
  /**
   * Per statement: true when it may be kept as a named prepared statement (docs/decisions.md
   * 10.30). A round trip is named only when all may be named and all but the last stop early.
   */
  nameable?: readonly boolean[];
  /** Server silence that destroys the connection: SERVER_TIMEOUT (docs/decisions.md 10.6). */
  silenceLimitMs?: number;
  /**
   * Per step of a round trip: it is given up after steps × stepTimeLimitMs + the silence grace,
   * even when the server keeps sending (trickled notices).
   */
  stepTimeLimitMs?: number;
  /** sqlgate's control statements (BEGIN, SET LOCAL) sent first in the round trip. */
  before?: readonly string[];
  /** Control statements (COMMIT) sent after it; skipped when it fails. */
  after?: readonly string[];
}

/** What the server reports about the transaction after each statement. */
export type TransactionStatus = 'idle' | 'in-transaction' | 'failed';

/**
 * One pooled connection, lent to one request at a time. `run` and `runBatch` settle with values
 * (docs/decisions.md 10.21): their promises reject only for a defect. `cancel` is best effort.
 */
export interface Connection {
  /** Runs one statement: its result, or why it failed (see BatchResult.error). */
  run(sql: string, options: RunOptions): Promise<Settled<StatementResult>>;
  /** Runs statements in one round trip; a failure stops it and comes with the results before it. */
  runBatch(sql: readonly string[], options: RunOptions): Promise<BatchResult>;
  /**
   * Runs one COPY ... FROM STDIN fed from `source` at the server's pace; a failing source loads
   * nothing. Without it, POST /api/copy cannot be served.
   */
  copyFrom?(sql: string, source: AsyncIterable<Uint8Array>): Promise<Settled<StatementResult>>;
  /** The transaction state the server reported after the last statement. */
  transactionStatus(): TransactionStatus;
  /** Asks the server to cancel the statement running on this connection (a CancelRequest). */
  cancel(): Promise<void>;
  /**
   * The settings that change how SQL text is read, as reported now (a session's SET counts).
   * Without it, a session's text is read as its pool's (docs/decisions.md 10.26).
   */
  serverSettings?(): ServerSettings | undefined;
  /** Calls `listener` once if the connection ends while lent; returns how to stop listening. */
  onClose?(listener: () => void): () => void;
  /** Closes the connection at once, for a server that ignores cancels: the call in flight fails. */
  abandon?(): void;
  /**
   * Whether session state (SET, temporary tables, locks, LISTEN, PREPARE) stays with this
   * connection (docs/decisions.md 10.32). Never rejects. Without it, the state is taken to be kept.
   */
  sessionStateVerdict?(): Promise<SessionStateVerdict>;
  /**
   * Gives the connection back: with `resetSession`, cleaned first (ROLLBACK, DISCARD ALL; destroyed
   * if that fails) before it is lent again; with `destroy`, closed instead.
   */
  release(options?: { resetSession?: boolean; destroy?: boolean }): void;
}

/** Whether a target keeps session state (docs/decisions.md 10.32): only `kept` lets it be used. */
export type SessionStateVerdict =
  /** A direct server, or a pooler shown to keep one server connection for each client connection. */
  | { kind: 'kept' }
  /** A pooler shown to hand a client connection's transactions to other server connections. */
  | { kind: 'transaction-pooler' }
  /** A pooler not shown to keep the state: it may be a transaction pooler, and is refused as one. */
  | { kind: 'pooler-unproven' }
  /** Not known: whether there is a pooler at all could not be found out (the failure says why). */
  | { kind: 'unknown'; failure: ConnectionError };

/** How GET /api/stats/pools, metrics and logs name the pool of a target. */
export function poolIdOf(
  target: Pick<ConnectionTarget, 'name' | 'host' | 'port' | 'user' | 'database'>,
): string {
  // A name holds no ':', so it is never taken for another target's id.
  if (target.name !== undefined) return target.name;
  return `${target.host}:${target.port}:${target.user}:${target.database}`;
}

/** One entry of GET /api/stats/pools (PoolStat in docs/interface.md). */
export interface PoolStat {
  /** `host:port:user:database`, or the name of a connection the server holds. */
  poolId: string;
  totalConnections: number;
  idleConnections: number;
  activeConnections: number;
  waitingClients: number;
}

export interface AcquireOptions {
  /** Aborting gives up waiting for a connection. */
  signal?: AbortSignalLike;
}

/** Outcome of a one-off connection check (POST /api/test-connection). */
export interface ConnectionCheck {
  serverVersion: string;
  database: string;
  user: string;
  ssl: boolean;
  latencyMs: number;
}

/** What a target's server reported about itself that changes how sqlgate reads SQL text. */
export interface ServerSettings {
  /**
   * As reported at connect; off makes backslashes escape in '...', which moves where statements
   * end (docs/decisions.md 10.11).
   */
  standardConformingStrings: boolean;
}

/** Lends connections to targets; owns the pools behind them. Its calls settle as Connection's do. */
export interface ConnectionProvider {
  /** A connection, or a `ConnectionError` / `DatabaseError` (login refused) saying why not. */
  acquire(target: ConnectionTarget, options?: AcquireOptions): Promise<Settled<Connection>>;
  /** Connects once, outside the pools, and reports what it found, or why it could not. */
  check(target: ConnectionTarget): Promise<Settled<ConnectionCheck>>;
  /** Never touches a database. */
  poolStats(): PoolStat[];
  /**
   * Where the target's cached results belong (docs/decisions.md 10.20), as the server names itself.
   * May ask the server once per pool and resolve the host; failures settle as a ConnectionError.
   */
  scopeOf(target: ConnectionTarget): Promise<Settled<CacheScope>>;
  /**
   * The settings reported when a connection to the target last started (a session's SET does not
   * count). Never touches a database. Without it, PostgreSQL's defaults are assumed.
   */
  serverSettings?(target: ConnectionTarget): ServerSettings | undefined;
  /**
   * Connections the target's pool could lend now without a wait. Never touches a database.
   * Unknown: several reads of one request take a connection each (docs/decisions.md 10.29).
   */
  spareConnections?(target: ConnectionTarget): number | undefined;
  /** Ends every pool. Idempotent. */
  close(): Promise<void>;
}
