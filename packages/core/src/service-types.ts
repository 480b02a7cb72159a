/**
 * What the query service offers and answers: its options, the options of one request, and the
 * shapes of its answers. The service itself is built in service.ts; each step of a request is in
 * pipeline/.
 */
import type { CacheEntry } from './cache';
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
  /** Where cached results live. Without one, nothing is cached. */
  cacheStore?: CacheStore;
  /** TTL of a cached result when the request names none (QUERY_CACHE_TTL_MS). Default 60 s. */
  cacheTtlMs?: number;
  /** Results larger than this (JSON bytes) are never cached. Default 64 MiB. */
  cacheMaxEntryBytes?: number;
  /** Cache reads of requests that do not say (QUERY_CACHE_DEFAULT=on). Default false. */
  cacheByDefault?: boolean;
  /**
   * Where GET /api/stats/cache's counters are kept: shared by every instance using it (Redis, or
   * the primary of a cluster of workers). Default: this process only.
   */
  counters?: SharedCounters;
  /** Bytes of rows one request may return (MAX_RESULT_BYTES). Default 64 MiB. */
  maxResultBytes?: number;
  /**
   * Bytes of rows all requests may hold at once beyond 256 KiB each (MAX_RESULT_BYTES_TOTAL,
   * docs/decisions.md 10.2): past it, answers are cut as by maxResultBytes. One caller (user,
   * database and server) may hold a quarter of it, or maxResultBytes when that is more (10.37).
   * Default: no bound.
   */
  maxResultBytesTotal?: number;
  /**
   * Limits of sessions (MAX_SESSIONS, SESSION_IDLE_TIMEOUT_MS, SESSION_MAX_LIFETIME_MS, and the
   * sessions one pool may lend, which should stay below its size). Defaults: 100, 60 s, 15 min, 9
   * (for pools of 10 connections: set `maxPerPool` to your pool size - 1).
   */
  sessions?: Partial<SessionLimits>;
  /**
   * Told what an operator should know that the answer alone does not show: a write whose cache
   * invalidation the store did not confirm (docs/decisions.md 10.27). The server logs it at warn.
   */
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
  /**
   * The request's id (X-Request-Id): with one, `cancelRequest` can stop the request from elsewhere
   * (docs/decisions.md 10.26).
   */
  requestId?: string;
  /**
   * When whoever may cancel the request can know `requestId`: `from-start` (the default), an id
   * the caller chose; `when-streaming`, an id sqlgate made up, which reaches the caller in the
   * headers of its answer: the request can be cancelled by it once its answer starts streaming
   * (a JSON answer arrives whole, when nothing is left to cancel).
   */
  requestIdKnown?: 'from-start' | 'when-streaming';
  /**
   * The answer's rows stay in memory until the caller has written them (MAX_RESULT_BYTES_TOTAL,
   * docs/decisions.md 10.2, 10.37): given, it is handed the answer's hold on the shared budget, to
   * count as what it writes and to give back once it is written; absent, the hold goes back as the
   * service answers.
   */
  holdResult?: (held: HeldResult) => void;
}

export interface StreamOptions extends ExecuteOptions {
  /**
   * Stream the rows as they arrive: `parsed`, values as `execute` gives them; `text`, every value
   * as PostgreSQL's text (or null) in array rows, as for CSV. Absent: the answer is the one
   * `execute` gives, except that a request that is one COPY ... TO STDOUT streams its data.
   */
  rows?: 'parsed' | 'text';
  /** The text must hold exactly one statement (a CSV answer has room for one). */
  oneStatement?: boolean;
}

/**
 * A streamed request (docs/decisions.md 10.22). When it failed before its first statement began
 * (invalid, unreachable, refused) nothing was streamed, and `response` is the answer `execute`
 * would give; otherwise `events` yields the answer as it is produced, ending with `done`.
 */
export type QueryStream =
  | { streamed: false; response: QueryServiceResponse }
  | {
      streamed: true;
      events: AsyncIterable<StreamEvent>;
      /** Set when the request is a COPY ... TO STDOUT: its `copy` events are the whole answer. */
      copy?: CopyOut;
    };

/** Where the time of a request went, for the answer's timing header. */
export interface QueryTimings {
  poolWaitMs: number;
  executionMs: number;
}

export interface QueryServiceResponse extends QueryResponse {
  timings: QueryTimings;
}

/**
 * Outcome of a connection check: the test-connection of docs/interface.md, with the status rules
 * of docs/decisions.md 5. `warnings` are the request's (a body's unknown fields), unless it was
 * refused.
 */
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

/**
 * The use cases. Each one that runs a request takes it typed, or the RequestError that refused its
 * body (`RequestOrRefusal`), and answers a refusal as it answers any refused request.
 */
export interface QueryService {
  /** Runs a query (POST /api/query). Expected failures are responses, never rejections. */
  execute(
    request: RequestOrRefusal<QueryRequest>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /**
   * Runs a query with its rows streamed as they arrive, without a row limit unless the request
   * names `maxRows`. Expected failures are answers, never rejections.
   */
  stream(request: RequestOrRefusal<QueryRequest>, options?: StreamOptions): Promise<QueryStream>;
  /**
   * Runs a POST /api/copy: `request`'s `sql` is one COPY ... FROM STDIN, and `source` its data,
   * read as PostgreSQL takes it. If the source fails, nothing is loaded.
   */
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
  /**
   * Whether the result cache answers now: one round trip to a shared store (Redis), within the
   * store's own bound; a cache in memory, or none, always does. Touches no database.
   */
  cacheHealth(): Promise<CacheHealth>;
  /**
   * Opens a session on one pooled connection (POST /api/sessions). Aborting `signal` (the caller
   * went away) gives up, and opens no session for nobody; with a `requestId`, a cancel by that id
   * gives up too. An `idleTimeoutMs` above `sessionLimits.idleTimeoutMs` is refused.
   */
  openSession(
    request: RequestOrRefusal<SessionOpenRequest>,
    options?: Pick<ExecuteOptions, 'signal' | 'requestId'>,
  ): Promise<ServiceAnswer<SessionOpened>>;
  /**
   * Runs a query in a session (POST /api/sessions/{id}/query): in order, as written. The answer is
   * `execute`'s, with the session's state in `session`; a refusal too, once the session is found.
   */
  executeInSession(
    sessionId: string,
    query: RequestOrRefusal<SessionQuery>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /** Ends a session: what runs is cancelled, an open transaction rolled back, the connection cleaned. */
  closeSession(sessionId: string): Promise<ServiceAnswer<{ closed: true; rolledBack: boolean }>>;
  /** Cancels what runs in a session now (DELETE /api/sessions/{id}/query). */
  cancelSessionQuery(sessionId: string): ServiceAnswer<{ cancelled: true }>;
  /**
   * Cancels the requests running with this id for `login` (host, port, user, database and
   * password). A transport refuses a cancel's body itself: it tries the cancel in every process
   * serving together (docs/decisions.md 10.35), each with the login it read once.
   */
  cancelRequest(requestId: string, login: ConnectionTarget): ServiceAnswer<{ cancelled: true }>;
  /**
   * Ends every session (what runs in them is cancelled, their transactions rolled back) and opens
   * no more: the first step of a shutdown, before in-flight requests are awaited.
   */
  closeSessions(): Promise<void>;
  /** Sessions open now, opened and ended since the start; touches no database. */
  sessionStatistics(): SessionStatistics;
  /** The limits of sessions (MAX_SESSIONS, SESSION_IDLE_TIMEOUT_MS...) this service keeps. */
  readonly sessionLimits: Readonly<SessionLimits>;
  /**
   * Whether this instance holds the session: open or ending here, or ended here lately. Requests
   * naming another are for another instance (a worker of WORKERS=n finds it, docs/decisions.md 10.35).
   */
  knowsSession(sessionId: string): boolean;
  /** Ends every pool. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The same `truncatedBy: 'bytes'` as a request's own MAX_RESULT_BYTES, but passing: the warning
 * tells the caller that the same request may come back whole later (docs/decisions.md 10.2), and
 * whose answers held the memory (10.37).
 */
export const SHARED_BUDGET_WARNINGS: Readonly<Record<SharedLimit, string>> = {
  others:
    'Rows were cut at MAX_RESULT_BYTES_TOTAL: other answers held the memory this server gives results; the same request may return whole later',
  caller:
    "Rows were cut at MAX_RESULT_BYTES_TOTAL: this user's other answers on this database hold their share of the memory this server gives results; the same request may return whole later",
};
