/** The query service's options, per-request options and answer shapes (built in service.ts). */
import type { CacheEntry } from './cache';
import type { ReadRouting, StreamRoute } from './routing/read-routing';
import type { ServedBy } from './routing/replica-choice';
import type { HeldResult, SharedLimit } from './execution/result-budget';
import type { QueryResponse, ServiceAnswer } from './execution/response';
import type { AbortSignalLike } from './ports/abort-signal';
import type { CacheStore, CacheUsage, SharedCounters } from './ports/cache-store';
import type { Clock } from './ports/clock';
import type {
  ConnectionCheck,
  ConnectionProvider,
  ConnectionTarget,
  PoolStat,
} from './ports/connections';
import type { RequestObserver } from './ports/request-observer';
import type {
  ConnectionCheckRequest,
  QueryRequest,
  RequestOrRefusal,
  SessionOpenRequest,
  SessionQuery,
} from './request';
import type { TargetPolicy } from './ports/target-policy';
import type { SessionLimits, SessionStatistics } from './sessions/session-registry';
import type { SessionOpened } from './sessions/session-use-cases';
import type { CacheStats } from './stats';
import type { CopyOut } from './streaming/copy-out';
import type { StreamEvent } from './streaming/stream-events';

export interface QueryServiceOptions {
  connections: ConnectionProvider;
  clock?: Clock;
  /** Rows per statement when a request names no `maxRows` (MAX_ROWS). Default 10000. */
  defaultMaxRows?: number;
  /** Statements per request (MAX_STATEMENTS). Default 10000. */
  maxStatements?: number;
  /** Clean every connection after every request (SESSION_RESET=always). Default false. */
  alwaysResetSession?: boolean;
  /** Reads of one request running at once on the parallel path. Default 5. */
  maxParallelReads?: number;
  /** Decides which targets callers may reach; without one, any. */
  targetPolicy?: TargetPolicy;
  /** Sends a named connection's reads to its replicas (docs/decisions.md 13); without it, none. */
  readRouting?: ReadRouting;
  /** Where cached results live. Without one, nothing is cached. */
  cacheStore?: CacheStore;
  /** TTL of a cached result when the request names none (QUERY_CACHE_TTL_MS). Default 60 s. */
  cacheTtlMs?: number;
  /** Results larger than this (JSON bytes) are never cached. Default 64 MiB. */
  cacheMaxEntryBytes?: number;
  /** Cache reads of requests that do not say (QUERY_CACHE_DEFAULT=on). Default false. */
  cacheByDefault?: boolean;
  /** Where GET /api/stats/cache's counters are kept, shared by instances. Default: this process. */
  counters?: SharedCounters;
  /** Bytes of rows one request may return (MAX_RESULT_BYTES). Default 64 MiB. */
  maxResultBytes?: number;
  /**
   * Bytes of rows all requests may hold at once beyond 256 KiB each (MAX_RESULT_BYTES_TOTAL,
   * docs/decisions.md 10.2, 10.37); one caller at most a quarter. Default: no bound.
   */
  maxResultBytesTotal?: number;
  /** Limits of sessions; `maxPerPool` (default 9) should stay below the pool size. */
  sessions?: Partial<SessionLimits>;
  /** Told what an operator should know: an unconfirmed invalidation (docs/decisions.md 10.27). */
  warn?: (message: string, details: Record<string, unknown>) => void;
}

/** docs/decisions.md 10.2. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;

/** GET /api/stats/cache. */
export interface CacheStatistics {
  stats: CacheStats;
  /** The 10 most recently cached entries, newest first. */
  entries: CacheEntry[];
}

export interface ExecuteOptions {
  /** Aborting cancels the statements still running in PostgreSQL. */
  signal?: AbortSignalLike;
  /** Told what the request does as it does it: parse, pool waits, statements (10.25). */
  observer?: RequestObserver;
  /** The request's id (X-Request-Id), for `cancelRequest` (docs/decisions.md 10.26). */
  requestId?: string;
  /**
   * When the canceller can know `requestId`: `from-start` (the caller chose it), or
   * `when-streaming` (sqlgate made it up; the caller sees it in the streamed answer's headers).
   */
  requestIdKnown?: 'from-start' | 'when-streaming';
  /**
   * Takes the answer's hold on the shared budget, to give back once written (docs/decisions.md
   * 10.2, 10.37); absent, the hold goes back as the service answers.
   */
  holdResult?: (held: HeldResult) => void;
  /**
   * Every value as PostgreSQL's text (or null), rows as arrays: a Neon-compatible answer. Such an
   * answer is neither served from the result cache nor kept in it, which holds parsed values.
   */
  textValues?: boolean;
  /** The text must hold exactly one statement (a CSV answer has room for one, a Neon query one). */
  oneStatement?: boolean;
  /**
   * The caller's consistency token (Sqlgate-Consistency-Token): on a connection with replicas, a
   * replica serves only once it has replayed that write, and the result cache is not read.
   */
  consistencyToken?: string;
}

export interface StreamOptions extends ExecuteOptions {
  /**
   * Stream rows as they arrive: `parsed` values, or `text` array rows (CSV). Absent: `execute`'s
   * answer, except that one COPY ... TO STDOUT streams its data.
   */
  rows?: 'parsed' | 'text';
}

/**
 * A streamed request (docs/decisions.md 10.22): `response` when it failed before its first
 * statement, else `events`, ending with `done`.
 */
export type QueryStream =
  | { streamed: false; response: QueryServiceResponse }
  | {
      streamed: true;
      events: AsyncIterable<StreamEvent>;
      /** Set when the request is a COPY ... TO STDOUT: its `copy` events are the whole answer. */
      copy?: CopyOut;
      /** Set on a named connection with replicas: where it runs, and whether a token follows. */
      route?: StreamRoute;
    };

/** Where the time of a request went, for the answer's timing header. */
export interface QueryTimings {
  poolWaitMs: number;
  executionMs: number;
}

export interface QueryServiceResponse extends QueryResponse {
  timings: QueryTimings;
  /** On a named connection with replicas: where the request ran (docs/decisions.md 13). */
  servedBy?: ServedBy;
  /** On a named connection with replicas, after a request that may have written: its token. */
  consistencyToken?: string;
}

/** Outcome of a connection check (docs/interface.md; status rules: docs/decisions.md 5). */
export type ConnectionCheckResponse =
  | {
      body: {
        success: true;
        message: 'Connection successful';
        warnings?: string[];
      } & ConnectionCheck;
    }
  | {
      body: { success: false; error: { message: string; code: string }; warnings?: string[] };
      failure: QueryResponse['failure'];
    };

/** What `cacheHealth` found: a cache that answers, or why it does not. */
export type CacheHealth = { available: true } | { available: false; reason: string };

/** The use cases; each takes its request typed, or the RequestError that refused its body. */
export interface QueryService {
  /** Runs a query (POST /api/query). Expected failures are responses, never rejections. */
  execute(
    request: RequestOrRefusal<QueryRequest>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /** Runs a query with its rows streamed, without a row limit unless it names `maxRows`. */
  stream(request: RequestOrRefusal<QueryRequest>, options?: StreamOptions): Promise<QueryStream>;
  /** Runs a POST /api/copy: one COPY ... FROM STDIN fed from `source` (a failure loads nothing). */
  copyFrom(
    request: RequestOrRefusal<QueryRequest>,
    source: AsyncIterable<Uint8Array>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /** Checks a target (POST /api/test-connection): one connection outside the pools. */
  checkConnection(
    request: RequestOrRefusal<ConnectionCheckRequest>,
  ): Promise<ConnectionCheckResponse>;
  /** PoolStat (docs/interface.md) for every pool; touches no database. */
  poolStats(): PoolStat[];
  /** Counters and the most recent cache entries; touches no database. */
  cacheStatistics(): Promise<CacheStatistics>;
  /** Removes every cached result. */
  clearCache(): Promise<void>;
  /** Entries, bytes and evictions of the result cache (zeros without one); touches no database. */
  cacheUsage(): Promise<CacheUsage>;
  /** Whether the result cache answers now (one round trip to a shared store). */
  cacheHealth(): Promise<CacheHealth>;
  /**
   * Opens a session on one pooled connection (POST /api/sessions); `signal` or a cancel by
   * `requestId` gives up. An `idleTimeoutMs` above `sessionLimits.idleTimeoutMs` is refused.
   */
  openSession(
    request: RequestOrRefusal<SessionOpenRequest>,
    options?: Pick<ExecuteOptions, 'signal' | 'requestId'>,
  ): Promise<ServiceAnswer<SessionOpened>>;
  /** Runs a query in a session, in order, as written: `execute`'s answer plus `session`. */
  executeInSession(
    sessionId: string,
    query: RequestOrRefusal<SessionQuery>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /** Ends a session: what runs is cancelled, an open transaction rolled back, the connection cleaned. */
  closeSession(sessionId: string): Promise<ServiceAnswer<{ closed: true; rolledBack: boolean }>>;
  /** Cancels what runs in a session now (DELETE /api/sessions/{id}/query). */
  cancelSessionQuery(sessionId: string): ServiceAnswer<{ cancelled: true }>;
  /** Cancels the requests running with this id for `login` (docs/decisions.md 10.35). */
  cancelRequest(requestId: string, login: ConnectionTarget): ServiceAnswer<{ cancelled: true }>;
  /** Ends every session and opens no more: the first step of a shutdown. */
  closeSessions(): Promise<void>;
  /** Sessions open now, opened and ended since the start; touches no database. */
  sessionStatistics(): SessionStatistics;
  /** The limits of sessions (MAX_SESSIONS, SESSION_IDLE_TIMEOUT_MS...) this service keeps. */
  readonly sessionLimits: Readonly<SessionLimits>;
  /** Whether this instance holds (or lately held) the session (docs/decisions.md 10.35). */
  knowsSession(sessionId: string): boolean;
  /** Ends every pool. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Warnings of rows cut by the shared budget: passing (docs/decisions.md 10.2, 10.37). */
export const SHARED_BUDGET_WARNINGS: Readonly<Record<SharedLimit, string>> = {
  others:
    'Rows were cut at MAX_RESULT_BYTES_TOTAL: other answers held the memory this server gives results; the same request may return whole later',
  caller:
    "Rows were cut at MAX_RESULT_BYTES_TOTAL: this user's other answers on this database hold their share of the memory this server gives results; the same request may return whole later",
};
