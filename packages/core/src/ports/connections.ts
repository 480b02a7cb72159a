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
  /** The server's name as the caller gave it: TLS checks the certificate against it; `poolId` shows it. */
  host: string;
  /**
   * The address to connect to, when a `TargetPolicy` resolved `host` and checked this address; the
   * connection then goes here and `host` is not resolved again. Absent: `host` is resolved.
   */
  address?: string;
  port: number;
  user: string;
  /** Absent means no password is sent (never the service's own PGPASSWORD or ~/.pgpass). */
  password?: string;
  database: string;
  sslMode: SslMode;
}

/**
 * The identity of a target for the result cache (docs/decisions.md 10.20). Entries are keyed by
 * `endpoint` and `credentials`, so one user never sees another user's rows; a write invalidates by
 * `database` (every user's entries, through every endpoint) or, when it may reach beyond one
 * database (roles, DO, CALL...), by `server`.
 */
export interface CacheScope {
  /** The server reached, as it names itself: the same through every address, port and pooler. */
  server: string;
  /** The database reached on `server`, as the server names it. Writes invalidate by it. */
  database: string;
  /**
   * The database and the way it was reached (resolved address, port and database name), where
   * entries are served: a pooler may log in as another user or with other settings than a direct
   * connection, so what was read through one is not served through another. Absent: `database`.
   */
  endpoint?: string;
  /** The user and a keyed hash of the password; never the password itself. */
  credentials: string;
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
  /**
   * Milliseconds the server took on it, when the adapter could tell (statements sent together in
   * one round trip cannot be timed from outside one by one).
   */
  durationMs?: number;
  /**
   * The types PostgreSQL gave the statement's parameters (OIDs, `$1` first), when the adapter
   * asked for them: whether a parameter's value may be read as date/time input depends on them
   * (docs/decisions.md 10.36).
   */
  parameterTypes?: readonly number[];
}

/** Statements sent together: the results of those that ran, and the error that stopped the rest. */
export interface BatchResult {
  /** The statements that completed, in order (before a lost connection too: they may have committed). */
  results: StatementResult[];
  /**
   * Statement `results.length` failed, or a control statement did (see DatabaseError.failedStep),
   * or the connection broke (ConnectionError), or the parameters could not be sent (RequestError).
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
   * Asked before a row is read, with its size on the wire: false when the consumer cannot hold
   * it now (docs/decisions.md 10.2). The row is then dropped unread, and so are the statement's
   * later rows: it is cut, `truncatedBy: 'bytes'`. Without `admit`, every row is taken.
   */
  admit?(bytes: number): boolean;
  /**
   * One row, and how many bytes it holds: what `admit` took for it, or without `admit` about what
   * its values take. False when the consumer holds enough: the connection stops reading from the
   * server (which then waits) until `drained()` resolves.
   */
  row(position: number, row: unknown, bytes: number): boolean;
  /**
   * The data of a COPY ... TO STDOUT, as the server sends it; valid only during the call (the
   * sink copies what it keeps). Only a sink that asks for COPY data has this; without it COPY
   * data is a protocol fault. Returns false as `row` does.
   */
  copyData?(position: number, data: Uint8Array): boolean;
  /** Resolves once the consumer wants rows again (at once when it is gone). */
  drained(): Promise<void>;
  /** The statement finished: its command tag, row count and time (its `rows` are empty). */
  complete(position: number, result: StatementResult): void;
}

export interface RunOptions {
  /**
   * Rows go here as they arrive, with backpressure, and are not kept (streamed responses). The
   * byte budget does not apply: memory stays bounded because reading waits for the consumer, and
   * the sink admits each row (`admit`) or refuses it.
   */
  rowSink?: RowSink;
  /** Every value as PostgreSQL sent it: its text, or null (a CSV answer). */
  textValues?: boolean;
  /**
   * With `rowSink`: a row larger than this is dropped unread and the statement marked truncated
   * by bytes, so one wide row cannot hold unbounded memory (docs/decisions.md 10.22).
   */
  maxRowBytes?: number;
  /** Bound to $1..$n. */
  params?: readonly unknown[];
  rowMode: RowMode;
  /** At most this many rows are kept per statement. */
  maxRows: number;
  /** Row bytes the request may still return; rows past it are dropped (docs/decisions.md 10.2). */
  budget?: ResultBudget;
  /**
   * Per statement: true when it may be stopped once its limits are reached, because it is a read
   * proven free of side effects. Every other statement runs to completion and rows past the limits
   * are read and dropped (docs/decisions.md 10.4). Absent: all run to completion.
   */
  stopEarly?: readonly boolean[];
  /**
   * Per statement: true when it may be kept as a named prepared statement and run again by name
   * (docs/decisions.md 10.30): a read that changes no session state, holds no literal whose value
   * PostgreSQL fixes when it parses (a string, whose meaning may depend on TimeZone, DateStyle or
   * the time of day), outside a session. The adapter names a round trip's statements only when all
   * may be named and all but the last may stop early. Absent: none may be named.
   */
  nameable?: readonly boolean[];
  /**
   * Give up when the server has sent nothing for this long while an answer is awaited: the
   * connection is destroyed and the call rejects with a SERVER_TIMEOUT ConnectionError
   * (docs/decisions.md 10.6). Absent: wait as long as the server takes.
   */
  silenceLimitMs?: number;
  /**
   * Each step of a round trip (a statement, BEGIN, COMMIT...) may take this long: the round trip
   * is given up, as with `silenceLimitMs`, after steps × stepTimeLimitMs + the silence grace even
   * when the server keeps sending (a server that trickles notices). Absent: no such bound.
   */
  stepTimeLimitMs?: number;
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

/**
 * One pooled connection, lent to one request at a time. `run` and `runBatch` settle with values
 * (docs/decisions.md 10.21): their promises reject only for a defect. `cancel` is best effort.
 */
export interface Connection {
  /** Runs one statement: its result, or why it failed (see BatchResult.error). */
  run(sql: string, options: RunOptions): Promise<Settled<StatementResult>>;
  /**
   * Runs statements in order in one round trip. A failure stops the batch and is returned with the
   * results before it; the server skips everything after it up to the end of the batch.
   */
  runBatch(sql: readonly string[], options: RunOptions): Promise<BatchResult>;
  /**
   * Runs one COPY ... FROM STDIN, its data read from `source` as the server takes it (a slow
   * server holds the source). If the source fails, the COPY is failed and nothing is loaded.
   * Optional: a driver without it cannot serve POST /api/copy.
   */
  copyFrom?(sql: string, source: AsyncIterable<Uint8Array>): Promise<Settled<StatementResult>>;
  /** The transaction state the server reported after the last statement. */
  transactionStatus(): TransactionStatus;
  /** Asks the server to cancel the statement running on this connection (a CancelRequest). */
  cancel(): Promise<void>;
  /**
   * The settings that change how SQL text is read, as this connection's server reports them now:
   * a session's own SET counts (PostgreSQL reports standard_conforming_strings when it changes).
   * Optional: without it, a session's text is read as its pool's (docs/decisions.md 10.26).
   */
  serverSettings?(): ServerSettings | undefined;
  /**
   * Calls `listener` once if the connection ends while lent (the server closed it, the network
   * failed, or it was abandoned); returns how to stop listening. Optional: without it a session
   * learns that its connection died at its next request or when it expires.
   */
  onClose?(listener: () => void): () => void;
  /**
   * Closes the connection at once, whatever runs on it: the call in flight settles with a
   * ConnectionError. For a server that ignores cancel requests. Optional: without it such a
   * connection stays busy until the server answers.
   */
  abandon?(): void;
  /**
   * Whether state a statement leaves for later transactions (SET, temporary tables, advisory
   * locks, LISTEN, PREPARE) stays with this connection, as far as its target was shown to keep it
   * (docs/decisions.md 10.32). Never rejects. Optional: without it, the state is taken to be kept.
   */
  sessionStateVerdict?(): Promise<SessionStateVerdict>;
  /**
   * Gives the connection back. With `resetSession`, the session is cleaned first (ROLLBACK when a
   * transaction is open, then DISCARD ALL) and the connection is destroyed if that fails; the
   * cleaning may finish after this returns, but always before the connection is lent again.
   * With `destroy`, the connection is closed instead of returned.
   */
  release(options?: { resetSession?: boolean; destroy?: boolean }): void;
}

/**
 * What is known of whether a connection's target keeps state a statement leaves for later
 * transactions (docs/decisions.md 10.32). Only `kept` lets what needs that state run.
 */
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
  target: Pick<ConnectionTarget, 'host' | 'port' | 'user' | 'database'>,
): string {
  return `${target.host}:${target.port}:${target.user}:${target.database}`;
}

/** One entry of GET /api/stats/pools (PoolStat in docs/interface.md). */
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
   * `standard_conforming_strings` as the server reported it in its ParameterStatus at connect
   * (the value for this role and database). Off makes backslashes escape in '...' strings, which
   * moves where a statement ends (docs/decisions.md 10.11).
   */
  standardConformingStrings: boolean;
}

/** Lends connections to targets; owns the pools behind them. Its calls settle as Connection's do. */
export interface ConnectionProvider {
  /**
   * A connection, or why none could be had: a `ConnectionError` (unreachable, refused, timed out,
   * pool exhausted, the signal aborted the wait) or a `DatabaseError` (login refused).
   */
  acquire(target: ConnectionTarget, options?: AcquireOptions): Promise<Settled<Connection>>;
  /** Connects once, outside the pools, and reports what it found, or why it could not. */
  check(target: ConnectionTarget): Promise<Settled<ConnectionCheck>>;
  /** Never touches a database. */
  poolStats(): PoolStat[];
  /**
   * Where the target's cached results belong (docs/decisions.md 10.20): the server and database
   * actually reached, as the server tells it (whatever address, port, pooler or spelling of the
   * host reached it), the endpoint, and the credentials, without revealing the password. May ask
   * the server, once per pool, and resolve the host name; a server that cannot be reached or will
   * not tell, or a name that does not resolve, settles with a ConnectionError.
   */
  scopeOf(target: ConnectionTarget): Promise<Settled<CacheScope>>;
  /**
   * The settings the target's server reported when a connection to it last started, or undefined
   * until one has (or when the provider cannot tell). Never touches a database. A value changed by
   * a session's own SET does not count: that lasts only until the connection is cleaned, and the
   * split of a request is decided before it runs. Without this method every target is read with
   * PostgreSQL's defaults.
   */
  serverSettings?(target: ConnectionTarget): ServerSettings | undefined;
  /**
   * Connections the target's pool could lend now without a wait: its idle ones and those it may
   * still open, none while requests wait. Never touches a database. Without this method (or when
   * undefined) several reads of one request always take a connection each (docs/decisions.md 10.29).
   */
  spareConnections?(target: ConnectionTarget): number | undefined;
  /** Ends every pool. Idempotent. */
  close(): Promise<void>;
}
