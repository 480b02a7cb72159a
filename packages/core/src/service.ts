/**
 * The use cases the adapters call: run a query request, check a connection, report pools.
 * Transport-neutral: the HTTP app only turns these results into status codes and JSON.
 */
import {
  ResultCache,
  type CacheEntry,
  DEFAULT_CACHE_MAX_BYTES,
  DEFAULT_CACHE_TTL_MS,
  requestMayUseCache,
  UNCONFIRMED_INVALIDATION_WARNING,
  UNSCOPED_INVALIDATION_WARNING,
  writeExtentOf,
  type WriteExtent,
} from './cache';
import type { AbortSignalLike } from './ports/abort-signal';
import type { ConfiguredTargets } from './configured-targets';
import { ErrorCodes, RequestError, SqlgateError } from './errors';
import { ExecutionContext, elapsed, type ExecutionSettings } from './execution/context';
import {
  SharedResultBudget,
  StreamedRowBudget,
  type HeldResult,
  type SharedLimit,
} from './execution/result-budget';
import { lazyCacheScope, type RequestCacheScope } from './execution/cache-attempt';
import { noteCacheBypasses, type RequestCacheUse } from './execution/cache-use';
import { runAlone } from './execution/strategies/single';
import { executePlan } from './execution/execute';
import { isCopyFromStdin, runCopyFrom } from './execution/copy-from';
import { planExecution, planSessionRequest, type StrategyName } from './execution/plan';
import { RunningRequests, type RunningRequest } from './execution/running-requests';
import { asCancelled, cancelByRequestId, cancelledFailure } from './execution/cancelled';
import {
  ABORTED_BEFORE_START_MESSAGE,
  errorResponse,
  duplicateColumnWarnings,
  shapeResponse,
  withWarnings,
  type ServiceAnswer,
  statementText,
  type QueryResponse,
  type QueryResponseBody,
} from './execution/response';
import type { ExecutionOutcome } from './execution/outcome';
import { createParseMemo, loadParser, parserLoaded, type ParsedStatement } from './parser';
import { closingEvents } from './streaming/closing-events';
import { copyOutOf, isCopyToStdout, type CopyOut } from './streaming/copy-out';
import { EventChannel } from './streaming/event-channel';
import type { StreamEvent } from './streaming/stream-events';
import type { CacheStore, CacheUsage, SharedCounters } from './ports/cache-store';
import type { TargetPolicy } from './ports/target-policy';
import { systemClock, type Clock } from './ports/clock';
import {
  poolIdOf,
  type CacheScope,
  type ConnectionCheck,
  type ConnectionProvider,
  type ConnectionTarget,
  type PoolStat,
} from './ports/connections';
import type { RequestObserver } from './ports/request-observer';
import { reportRequestFailure, reportStatements } from './execution/report-to-observer';
import {
  connectionTestWarnings,
  parseConnectionCheckTarget,
  parseQueryRequest,
  parseSessionQueryRequest,
  type QueryOptions,
} from './request';
import {
  DEFAULT_SESSION_LIMITS,
  SessionRegistry,
  type SessionLimits,
  type SessionStatistics,
} from './sessions/session-registry';
import {
  createSessionUseCases,
  type SessionOpened,
  type SessionRun,
} from './sessions/session-use-cases';
import { statementsForTarget } from './statements-for-target';
import { cacheStatsOf, countableMs, QueryStatistics, zeroTotals, type CacheStats } from './stats';
import { withFields } from './with-fields';

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
  /**
   * Targets of the server's own configuration: a request that names none of host, port, user and
   * database runs on the default one (docs/decisions.md 10.48), through `targetPolicy` as any.
   */
  configuredTargets?: ConfiguredTargets;
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

/** How long the refresh of a stale entry may take when its request named no `timeoutMs` (10.27). */
const REFRESH_TIMEOUT_MS = 30_000;

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

/** Where the time of a request went, for a Server-Timing header. */
export interface QueryTimings {
  poolWaitMs: number;
  executionMs: number;
}

export interface QueryServiceResponse extends QueryResponse {
  timings: QueryTimings;
}

/**
 * Outcome of a connection check: the test-connection of docs/interface.md, with the status rules
 * of docs/decisions.md 5. `warnings` names unknown request fields, once the body was understood.
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

export interface QueryService {
  /** Runs a POST /api/query body. Expected failures are responses, never rejections. */
  execute(body: unknown, options?: ExecuteOptions): Promise<QueryServiceResponse>;
  /**
   * Runs a POST /api/query body with its rows streamed as they arrive, without a row limit unless
   * the body names `maxRows`. Expected failures are answers, never rejections.
   */
  stream(body: unknown, options?: StreamOptions): Promise<QueryStream>;
  /**
   * Runs a POST /api/copy: `body` is a query body whose `sql` is one COPY ... FROM STDIN, and
   * `source` its data, read as PostgreSQL takes it. If the source fails, nothing is loaded.
   */
  copyFrom(
    body: unknown,
    source: AsyncIterable<Uint8Array>,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /** Runs a POST /api/test-connection body: one connection outside the pools. */
  checkConnection(body: unknown): Promise<ConnectionCheckResponse>;
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
   * Runs a POST /api/sessions body: opens a session on one pooled connection. Aborting `signal`
   * (the caller went away) gives up, and opens no session for nobody; with a `requestId`, a
   * cancel by that id gives up too.
   */
  openSession(
    body: unknown,
    options?: Pick<ExecuteOptions, 'signal' | 'requestId'>,
  ): Promise<ServiceAnswer<SessionOpened>>;
  /**
   * Runs a POST /api/sessions/{id}/query body in that session: in order, as written. The answer is
   * `execute`'s, with the session's state in `session`.
   */
  executeInSession(
    sessionId: string,
    body: unknown,
    options?: ExecuteOptions,
  ): Promise<QueryServiceResponse>;
  /** Ends a session: what runs is cancelled, an open transaction rolled back, the connection cleaned. */
  closeSession(sessionId: string): Promise<ServiceAnswer<{ closed: true; rolledBack: boolean }>>;
  /** Cancels what runs in a session now (DELETE /api/sessions/{id}/query). */
  cancelSessionQuery(sessionId: string): ServiceAnswer<{ cancelled: true }>;
  /** Cancels the requests running with this id for the credentials in `body`. */
  cancelRequest(requestId: string, body: unknown): ServiceAnswer<{ cancelled: true }>;
  /**
   * Ends every session (what runs in them is cancelled, their transactions rolled back) and opens
   * no more: the first step of a shutdown, before in-flight requests are awaited.
   */
  closeSessions(): Promise<void>;
  /** Sessions open now, opened and ended since the start; touches no database. */
  sessionStatistics(): SessionStatistics;
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

/**
 * A stream's rows in flight stop drawing on the shared budget once its answer is written (the
 * transport's `holdResult`) or its consumer is done with it (event-channel.ts); at once when the
 * answer was not streamed after all.
 */
function releaseStreamedRows(channel: EventChannel, executeOptions: ExecuteOptions): void {
  const held = channel.heldRows;
  if (!channel.hasStarted) channel.releaseRows();
  else if (held?.holdsSharedBytes) executeOptions.holdResult?.(held);
}

function cutByBytes(outcome: ExecutionOutcome): boolean {
  return outcome.outcomes.some(
    (statement) => statement.ok && statement.result.truncatedBy === 'bytes',
  );
}

/**
 * Builds the query service over injected ports.
 *
 * @example
 * const service = createQueryService({ connections: createPostgresConnections() });
 * const { body } = await service.execute({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test', sql: 'SELECT 1' });
 */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const { connections } = options;
  const clock = options.clock ?? systemClock;
  const maxStatements = options.maxStatements ?? 10_000;
  const settings: ExecutionSettings = {
    defaultMaxRows: options.defaultMaxRows ?? 10_000,
    alwaysResetSession: options.alwaysResetSession ?? false,
    maxParallelReads: options.maxParallelReads ?? 5,
    maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    ...(options.maxResultBytesTotal === undefined
      ? {}
      : {
          sharedResultBudget: new SharedResultBudget(
            options.maxResultBytesTotal,
            options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
          ),
        }),
    nameStatements: !(options.alwaysResetSession ?? false),
  };
  let closing: Promise<void> | undefined;
  const counters: SharedCounters = options.counters ?? new QueryStatistics();
  const parse = createParseMemo();
  const cache =
    options.cacheStore &&
    new ResultCache({
      store: options.cacheStore,
      defaultTtlMs: options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
      maxEntryBytes: options.cacheMaxEntryBytes ?? DEFAULT_CACHE_MAX_BYTES,
      enabledByDefault: options.cacheByDefault ?? false,
      clock,
    });
  const running = new RunningRequests();
  const sessions = new SessionRegistry(
    connections,
    { ...DEFAULT_SESSION_LIMITS, ...options.sessions },
    clock,
  );

  function execute(body: unknown, executeOptions: ExecuteOptions = {}) {
    return run(body, executeOptions);
  }

  function copyFrom(
    body: unknown,
    source: AsyncIterable<Uint8Array>,
    executeOptions: ExecuteOptions = {},
  ): Promise<QueryServiceResponse> {
    return run(body, executeOptions, undefined, source);
  }

  function stream(body: unknown, streamOptions: StreamOptions = {}): Promise<QueryStream> {
    // The channel is made only when the request streams: a JSON answer pays nothing for it. The
    // answer is streamed once the channel has started, whole once the request ended without it.
    return new Promise((resolve, reject) => {
      let channel: EventChannel | undefined;
      let copy: CopyOut | undefined;
      const open = (caller: string, copyOut?: CopyOut): EventChannel => {
        copy = copyOut;
        const opened = new EventChannel(
          statementText,
          copyOut !== undefined,
          settings.sharedResultBudget && new StreamedRowBudget(settings.sharedResultBudget, caller),
        );
        channel = opened;
        // `started` also settles when the channel closes without an event: then the answer is whole.
        void opened.started.then(() => {
          if (opened.hasStarted)
            resolve({ streamed: true, events: opened, ...(copy ? { copy } : {}) });
        });
        return opened;
      };
      run(body, streamOptions, open)
        .then((response) => {
          try {
            if (channel?.hasStarted) {
              for (const event of closingEvents(response)) channel.push(event);
            }
          } finally {
            channel?.close();
          }
          if (!channel?.hasStarted) resolve({ streamed: false, response });
        })
        .catch((defect: unknown) => {
          channel?.close();
          // After the stream started, a defect ends it without its `done` event.
          if (!channel?.hasStarted) reject(defect);
        });
    });
  }

  /**
   * Runs a request. `copySource`, when given, is the data of the request's one COPY ... FROM STDIN
   * (POST /api/copy). `openStream`, when given, is asked for a channel once the request turns out to
   * stream: always with `rows`, and for a lone COPY ... TO STDOUT (with its format); `caller` is
   * whom its rows in flight are counted for (10.37).
   */
  function run(
    body: unknown,
    executeOptions: StreamOptions,
    openStream?: (caller: string, copy?: CopyOut) => EventChannel,
    copySource?: AsyncIterable<Uint8Array>,
    inSession?: SessionRun,
  ): Promise<QueryServiceResponse> {
    const { requestId } = executeOptions;
    let registration: ReturnType<RunningRequests['add']> | undefined;
    const register = (): RunningRequest | undefined => {
      if (requestId === undefined) return undefined;
      registration ??= running.add(requestId);
      return registration.request;
    };
    // Chained rather than awaited in a try/finally: one turn of the microtasks fewer per request.
    const done = (): void => registration?.done();
    return runRegistered(body, executeOptions, register, openStream, copySource, inSession).then(
      (response) => {
        done();
        return response;
      },
      (defect: unknown) => {
        done();
        throw defect;
      },
    );
  }

  /** `register` enters the request among the running ones, by its id, if it has one. */
  async function runRegistered(
    body: unknown,
    executeOptions: StreamOptions,
    register: () => RunningRequest | undefined,
    openStream?: (caller: string, copy?: CopyOut) => EventChannel,
    copySource?: AsyncIterable<Uint8Array>,
    inSession?: SessionRun,
  ): Promise<QueryServiceResponse> {
    const started = clock.now();
    // docs/decisions.md 10.26: an id the caller chose can stop the request from the start; one
    // sqlgate made up, once the caller can learn it (when the answer starts streaming). Entering
    // every request costs a busy server several per cent of its SELECT 1 throughput (measured).
    const registerWhenStreaming = executeOptions.requestIdKnown === 'when-streaming';
    let registered = registerWhenStreaming ? undefined : register();
    let context: ExecutionContext | undefined;
    let rowStream: EventChannel | undefined;
    let statements: readonly ParsedStatement[] = [];
    let outcome: ExecutionOutcome | undefined;
    let strategy: StrategyName | undefined;
    let target: ConnectionTarget | undefined;
    /** Why a statement that never reached the cache skipped it, by the request's facts. */
    let cacheUse: RequestCacheUse | undefined;
    let warnings: string[] | undefined;
    const { observer } = executeOptions;
    const failed = (error: unknown): QueryServiceResponse => {
      const executionMs = elapsed(clock, started);
      return withWarnings(
        withFields(errorResponse(error, executionMs), { timings: timings(context, executionMs) }),
        warnings,
      );
    };
    try {
      const session = inSession?.session;
      const request = session
        ? { ...parseSessionQueryRequest(body), target: session.requested }
        : parseQueryRequest(body, options.configuredTargets);
      warnings = request.warnings;
      if (registered) registered.target = request.target;
      // docs/decisions.md 10.17: the target is checked before the SQL is parsed, so a refused
      // target costs no parsing. The policy may pin the address it checked (DNS rebinding). A
      // session's target was checked when it opened.
      const checked = session
        ? session.target
        : options.targetPolicy
          ? ((await options.targetPolicy.check(request.target)) ?? request.target)
          : request.target;
      target = checked;
      // Awaited only until loaded: each await of a settled promise still costs a turn.
      if (!parserLoaded()) await loadParser();
      const parseStarted = clock.now();
      const splitting = statementsForTarget(request.sql, checked, {
        parse,
        connections: session ? session.connection.provider : connections,
        signal: executeOptions.signal,
      });
      const split = splitting instanceof Promise ? await splitting : splitting;
      observer?.parsed?.({
        startMs: parseStarted,
        endMs: clock.now(),
        statements: split.ok ? split.value.length : 0,
      });
      if (!split.ok) {
        // The caller went away while the connection that tells the setting was awaited.
        const aborted = executeOptions.signal?.aborted;
        return failed(
          aborted
            ? new SqlgateError(ErrorCodes.REQUEST_ABORTED, ABORTED_BEFORE_START_MESSAGE)
            : split.error,
        );
      }
      statements = split.value;
      if (statements.length === 0) {
        throw new RequestError(ErrorCodes.NO_STATEMENTS, 'No valid SQL statements found');
      }
      if (statements.length > maxStatements) {
        throw new RequestError(
          ErrorCodes.INVALID_REQUEST,
          `The SQL text holds ${statements.length} statements; at most ${maxStatements} are allowed`,
        );
      }
      if (executeOptions.oneStatement && statements.length !== 1) {
        throw new RequestError(
          ErrorCodes.INVALID_REQUEST,
          `This answer format holds one statement; the SQL text holds ${statements.length}`,
        );
      }
      if (copySource) refuseAsCopyFrom(statements, request.options);
      const copyOut =
        openStream !== undefined &&
        statements.length === 1 &&
        isCopyToStdout(statements[0] as ParsedStatement);
      const plan = session
        ? planSessionRequest(statements, request.options)
        : planExecution(
            statements,
            request.options,
            copySource ? isCopyFromStdin : copyOut ? isCopyToStdout : undefined,
          );
      strategy = plan.strategy;
      rowStream =
        openStream &&
        (copyOut
          ? openStream(poolIdOf(checked), copyOutOf(statements[0] as ParsedStatement))
          : executeOptions.rows
            ? openStream(poolIdOf(checked))
            : undefined);
      if (rowStream && registerWhenStreaming) {
        registered = register();
        if (registered) registered.target = request.target;
      }
      const textValues = rowStream !== undefined && executeOptions.rows === 'text';
      cacheUse = {
        // A session's reads never use the cache, whatever QUERY_CACHE_DEFAULT says.
        requested: !session && cache !== undefined && cache.isCacheRequested(request.options),
        streamed: rowStream !== undefined || copySource !== undefined,
      };
      const scope = lazyCacheScope(() => connections.scopeOf(checked));
      if (rowStream && cache)
        holdStreamedWriteEnds(rowStream, cache, scope, writeExtentOf(statements));
      // A streamed request runs its reads one after another, so that each statement's rows stay
      // together, and never uses the cache (its rows are not kept).
      context = new ExecutionContext(
        session ? session.connection.provider : connections,
        checked,
        // Text values come as arrays: a CSV row is a list.
        textValues ? { ...request.options, rowMode: 'array' } : request.options,
        rowStream
          ? { ...settings, maxParallelReads: 1, textValues, nameStatements: !session }
          : session
            ? { ...settings, nameStatements: false }
            : settings,
        clock,
        executeOptions.signal,
        // A session's reads may see its own uncommitted writes: never cached, never served.
        !session && !rowStream && cache && requestMayUseCache(statements)
          ? { cache, scope, refresh: refresherFor(checked, request.options) }
          : undefined,
        rowStream,
        observer,
      );
      registered?.attach(context);
      inSession?.attach(context);
      const statusBefore = session?.connection.transactionStatus();
      /** Why the cache may still hold what the request changed, if it may. */
      let trouble: InvalidationTrouble | undefined;
      try {
        outcome = copySource
          ? await runCopyFrom(context, statements[0] as ParsedStatement, copySource)
          : await executePlan(context, plan, statements);
      } finally {
        // Also when execution failed: a write may have committed before the failure. Not when a
        // request outside a session never had a connection: it sent nothing (10.27). A session's
        // own bookkeeping decides for it.
        if (cache && (session || context.connected)) {
          const extent = session
            ? session.writesToInvalidate(statements, statusBefore ?? 'idle')
            : writeExtentOf(statements);
          trouble = await invalidateWritten(cache, scope, extent);
        }
      }
      if (trouble) {
        warnings = [...(warnings ?? []), trouble.warning];
        options.warn?.(trouble.log, { reqId: executeOptions.requestId, place: trouble.place });
      }
      if (context.cancelled) outcome = asCancelled(outcome);
      noteCacheBypasses(outcome, cacheUse);
      const executionMs = elapsed(clock, started);
      const shaped = shapeResponse(plan, outcome, executionMs);
      if (context.cancelled) {
        shaped.failure = cancelledFailure(shaped.failure, outcome);
        // Programs tell a cancelled request apart without reading messages.
        if (shaped.failure?.code === ErrorCodes.REQUEST_CANCELLED) {
          shaped.body = { ...shaped.body, cancelled: true } as QueryResponseBody;
        }
      }
      const sharedLimit = context.sharedLimit ?? rowStream?.sharedLimit;
      if (sharedLimit && cutByBytes(outcome)) {
        warnings = [...(warnings ?? []), SHARED_BUDGET_WARNINGS[sharedLimit]];
        // Answers whose clients take nothing may now be given up sooner (a stream's refused row
        // told them already).
        if (sharedLimit === 'others' && !rowStream) settings.sharedResultBudget?.contended();
      }
      if (request.options.rowMode === 'object' && !textValues) {
        const duplicates = duplicateColumnWarnings(outcome);
        if (duplicates.length > 0) warnings = [...(warnings ?? []), ...duplicates];
      }
      return withWarnings(withFields(shaped, { timings: timings(context, executionMs) }), warnings);
    } catch (error) {
      // A request error of validation, or a defect (docs/decisions.md 10.21).
      return failed(error);
    } finally {
      // A whole answer's hold goes to its writer, who counts it as the JSON it writes (which may
      // draw even when the rows did not) and gives it back once written.
      if (context && !rowStream && settings.sharedResultBudget && executeOptions.holdResult) {
        executeOptions.holdResult(context.heldResult);
      } else context?.heldResult.release();
      if (rowStream) releaseStreamedRows(rowStream, executeOptions);
      countStatements(counters, statements, outcome);
      if (observer?.statementEnded && target) {
        reportStatements(observer, target, strategy ?? 'none', statements, outcome, cacheUse);
      }
      if (observer?.requestFailed && outcome?.failure) {
        reportRequestFailure(observer, outcome.failure, context?.acquireFailures);
      }
    }
  }

  /**
   * Reads a statement again for the cache, apart from any caller: the refresh of a stale entry
   * (docs/decisions.md 10.27). It has the request's options (its time limit too), and nobody's
   * signal: the caller it was served to already has the stale answer.
   */
  function refresherFor(
    target: ConnectionTarget,
    requestOptions: QueryOptions,
  ): RequestCacheScope['refresh'] {
    return async (statement, keep) => {
      // A deadline of its own, so that a refresh the server never answers cannot hold a pooled
      // connection, or the key's only refresh, for ever.
      const deadline = new AbortController();
      const timer = setTimeout(
        () => deadline.abort(),
        requestOptions.timeoutMs ?? REFRESH_TIMEOUT_MS,
      );
      const detached = new ExecutionContext(
        connections,
        target,
        requestOptions,
        settings,
        clock,
        deadline.signal,
      );
      try {
        await runAlone(detached, (lent) => detached.runStatement(lent, statement), keep);
      } finally {
        clearTimeout(timer);
        detached.heldResult.release();
      }
    };
  }

  async function checkConnection(body: unknown): Promise<ConnectionCheckResponse> {
    try {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new RequestError(ErrorCodes.INVALID_REQUEST, 'Request body must be a JSON object');
      }
      const fields = body as Record<string, unknown>;
      const target = parseConnectionCheckTarget(fields, options.configuredTargets);
      const warnings = connectionTestWarnings(fields);
      const checked = (await options.targetPolicy?.check(target)) ?? target;
      const check = await connections.check(checked);
      const response: ConnectionCheckResponse = check.ok
        ? { body: { success: true, message: 'Connection successful', ...check.value } }
        : checkFailure(check.error);
      if (warnings) response.body.warnings = warnings;
      return response;
    } catch (error) {
      return checkFailure(error);
    }
  }

  const { openSession, executeInSession, closeSession, cancelSessionQuery } = createSessionUseCases(
    {
      sessions,
      running,
      clock,
      ...(options.targetPolicy ? { targetPolicy: options.targetPolicy } : {}),
      ...(options.configuredTargets ? { configuredTargets: options.configuredTargets } : {}),
      runInSession: (body, executeOptions, inSession) =>
        run(body, executeOptions, undefined, undefined, inSession),
    },
  );

  let sessionsClosing: Promise<void> | undefined;
  function closeSessions(): Promise<void> {
    sessionsClosing ??= sessions.closeAll();
    return sessionsClosing;
  }

  function close(): Promise<void> {
    // Sessions first: each is ended and its connection given back to be cleaned (ROLLBACK,
    // DISCARD ALL) before the pools end. A store that fails to close must not keep the pools open.
    closing ??= closeSessions()
      .then(() =>
        Promise.all([
          connections.close(),
          // The cache first: its last try of unconfirmed invalidations may share the counters'
          // connection (Redis).
          (cache?.close() ?? Promise.resolve())
            .catch(() => undefined)
            .then(() => counters.close?.())
            .catch(() => undefined),
        ]),
      )
      .then(() => undefined);
    return closing;
  }

  return {
    execute,
    stream,
    copyFrom,
    checkConnection,
    poolStats: () => connections.poolStats(),
    cacheStatistics: async () => {
      const [totals, size, entries] = await Promise.all([
        counters.totals(),
        cache ? cache.size() : 0,
        cache ? cache.recentEntries(10) : [],
      ]);
      return { stats: cacheStatsOf(totals, size), entries };
    },
    clearCache: async () => {
      await cache?.clear();
    },
    cacheHealth: async (): Promise<CacheHealth> => {
      try {
        await cache?.ping();
        return { available: true };
      } catch (error) {
        return { available: false, reason: error instanceof Error ? error.message : String(error) };
      }
    },
    cacheUsage: async () =>
      (await cache?.usage()) ?? {
        entries: cache ? await cache.size() : 0,
        bytes: 0,
        evictions: 0,
      },
    openSession,
    executeInSession,
    closeSession,
    cancelSessionQuery,
    cancelRequest: (requestId: string, body: unknown) =>
      cancelByRequestId(running, requestId, body, options.configuredTargets),
    closeSessions,
    sessionStatistics: () => sessions.statistics(),
    knowsSession: (sessionId: string) => sessions.knows(sessionId),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The answer of a connection check that failed: the error's message and code only. */
function checkFailure(error: unknown): ConnectionCheckResponse {
  const { body, failure } = errorResponse(error, 0);
  const reported = body.error;
  const message =
    typeof reported === 'string' ? reported : (reported as { message: string }).message;
  const code =
    typeof reported === 'string' ? (failure?.code ?? 'ERROR') : (reported as { code: string }).code;
  return { body: { success: false, error: { message, code } }, failure };
}

/** POST /api/copy runs one COPY ... FROM STDIN, and no option a COPY would silently ignore. */
function refuseAsCopyFrom(statements: readonly ParsedStatement[], options: QueryOptions): void {
  if (statements.length !== 1 || !isCopyFromStdin(statements[0] as ParsedStatement)) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      'POST /api/copy runs exactly one COPY ... FROM STDIN statement',
    );
  }
  // A COPY commits by itself in autocommit.
  const { readOnly, dryRun, params } = options;
  const ignored = readOnly ? 'readOnly' : dryRun ? 'dryRun' : params ? 'params' : undefined;
  if (ignored) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `'${ignored}' cannot be used with POST /api/copy`,
    );
  }
}

function timings(context: ExecutionContext | undefined, executionMs: number): QueryTimings {
  return { poolWaitMs: context?.poolWaitMs ?? 0, executionMs };
}

/** docs/decisions.md 8: every statement of a request is counted once, as a hit, as executed, or as not run. */
function countStatements(
  counters: SharedCounters,
  statements: readonly ParsedStatement[],
  outcome: ExecutionOutcome | undefined,
): void {
  if (statements.length === 0) return;
  const delta = zeroTotals();
  const outcomes = outcome?.outcomes ?? [];
  for (const each of outcomes) {
    if (each.ok && each.cached) {
      delta.hits += 1;
      continue;
    }
    delta.misses += 1;
    delta.executed += 1;
    delta.executionMs += countableMs(each.executionTime);
  }
  delta.misses += Math.max(0, statements.length - outcomes.length);
  counters.add(delta);
}

/**
 * A streamed request's statement that may have written, or committed writes, has its `end` event
 * held until the cache dropped what the request may have changed (docs/decisions.md 10.27): the
 * caller must not learn of a commit while the cache still serves what it replaced. The request
 * invalidates once more when it ends, for what commits with it.
 */
function holdStreamedWriteEnds(
  channel: EventChannel,
  cache: ResultCache,
  scope: () => Promise<CacheScope | undefined>,
  extent: WriteExtent,
): void {
  if (extent === 'none') return;
  channel.holdEnds((statement) =>
    statement.statementClass === 'read' && !statement.changesSession
      ? undefined
      : invalidateWritten(cache, scope, extent).then(() => undefined),
  );
}

/**
 * After a request that may have written through the service, drops every cached entry of the
 * database it reached, for every user, or of the whole server when a statement may reach beyond
 * the database (docs/decisions.md 10.20). Decided from the statements sent, not from their
 * outcomes: a rolled-back or failed request invalidates too, which costs only re-execution.
 * Resolves to the database (or server) whose invalidation the store did not confirm, if any: it
 * stays pending (docs/decisions.md 10.27), and the answer says so.
 */
async function invalidateWritten(
  cache: ResultCache,
  scope: () => Promise<CacheScope | undefined>,
  extent: WriteExtent,
): Promise<InvalidationTrouble | undefined> {
  if (extent === 'none') return undefined;
  // A defect here must not turn the answer about what ran (a committed write) into a failure.
  const reached = await scope().catch(() => undefined);
  if (!reached) {
    return {
      warning: UNSCOPED_INVALIDATION_WARNING,
      log: 'cache invalidation impossible: the database reached is unknown',
    };
  }
  const place = extent === 'server' ? reached.server : reached.database;
  try {
    await cache.invalidate(reached, extent);
    return undefined;
  } catch {
    return {
      warning: UNCONFIRMED_INVALIDATION_WARNING,
      log: 'cache invalidation not confirmed by the store',
      place,
    };
  }
}

/** Why a write's answer says the cache may still hold what it changed: its warning and log line. */
interface InvalidationTrouble {
  warning: string;
  log: string;
  place?: string;
}
