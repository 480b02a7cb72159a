/**
 * What one request tells whoever watches it (metrics, traces, the slow-query log; docs/decisions.md
 * 10.25). Every method is optional and must not throw. Times are the service clock's milliseconds.
 */
import type { CacheStatus } from '../cache/cache-status';
import type { StrategyName } from '../execution/plan';

/** The SQL text was split and classified. */
export interface ParseEvent {
  startMs: number;
  endMs: number;
  /** Statements found; 0 when the text could not be split (or held none). */
  statements: number;
}

/** A pooled connection was asked for. */
export interface PoolAcquireEvent {
  /** `host:port:user:database`, as GET /api/stats/pools names the pool. */
  poolId: string;
  startMs: number;
  endMs: number;
  /** Absent: a connection was lent. Otherwise the code of the failure (ErrorCodes). */
  failureCode?: string;
  /** The SQLSTATE when the server refused the connection (a bad password: 28P01). */
  sqlState?: string;
  /** The wait ended because the pool had no connection within its acquire timeout. */
  timedOut?: boolean;
}

/** A statement of the request was answered: run, served from the cache, failed, or not run. */
export interface StatementEvent {
  /** Its position among the request's statements. */
  index: number;
  poolId: string;
  /** The server as the caller named it, and the database. */
  host: string;
  port: number;
  database: string;
  /** `none` when the request failed before a strategy was chosen. */
  strategy: StrategyName | 'none';
  /** First keyword, upper-cased: `SELECT`, `INSERT`, `WITH`... */
  command: string;
  /** The statement with its literals replaced by `$n` (withLiteralsAsParameters); made when read. */
  readonly normalisedText: string;
  /** `ok`, `error` (it failed), `cached` (served from the result cache) or `not_run`. */
  outcome: 'ok' | 'error' | 'cached' | 'not_run';
  /** Absent for `not_run`. */
  startMs?: number;
  endMs?: number;
  /** What the result cache did; absent for `not_run`. */
  cache?: CacheStatus;
  /** Milliseconds it took in PostgreSQL; 0 when it did not run. */
  durationMs: number;
  /** The SQLSTATE of a database error. */
  sqlState?: string;
  /** sqlgate's error code of the failure (ErrorCodes), when it failed. */
  errorCode?: string;
}

/**
 * The request failed where no statement's event can say so: its connection was lost or refused
 * sqlgate's own statements (BEGIN, SET) after it was lent, or its COMMIT failed (a deferred
 * constraint). A connection that could not be had is a PoolAcquireEvent instead.
 */
export interface RequestFailureEvent {
  /** `commit`: the COMMIT (or dryRun's ROLLBACK) of sqlgate's transaction failed. */
  step: 'commit' | 'request';
  /** sqlgate's error code (ErrorCodes). */
  errorCode: string;
  sqlState?: string;
}

export interface RequestObserver {
  parsed?(event: ParseEvent): void;
  poolAcquired?(event: PoolAcquireEvent): void;
  statementEnded?(event: StatementEvent): void;
  requestFailed?(event: RequestFailureEvent): void;
}
