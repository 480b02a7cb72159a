/**
 * @sqlgate/core: ports, use cases, the SQL parser and the execution strategies. No I/O: adapters
 * implement the ports (see @sqlgate/postgres-adapter), and transports read their requests into
 * the typed requests the use cases take, and call the service.
 */
export { createQueryService } from './service';
export type {
  CacheHealth,
  CacheStatistics,
  ConnectionCheckResponse,
  ExecuteOptions,
  QueryService,
  QueryServiceOptions,
  QueryServiceResponse,
  QueryStream,
  QueryTimings,
  StreamOptions,
} from './service';
export type { StreamEvent } from './streaming/stream-events';
export type { HeldResult } from './execution/result-budget';
export {
  DEFAULT_SESSION_LIMITS,
  sessionIdForLogs,
  type SessionLimits,
  type SessionStatistics,
} from './sessions/session-registry';
export type { SessionEnd } from './sessions/session';
export type { SessionOpened, SessionState } from './sessions/session-use-cases';
export type { ServiceAnswer } from './execution/response';
export { cancelAnswer } from './execution/cancelled';
export { FAILED_CANCELS_PER_REQUEST } from './execution/running-requests';
export type { CopyFormat, CopyOut } from './streaming/copy-out';
export * from './errors';
export * from './parser';
export * from './ports/connections';
export * from './ports/settled';
export type { AbortSignalLike } from './ports/abort-signal';
export { systemClock, type Clock } from './ports/clock';
export { withFields } from './with-fields';
export { promiseFrom } from './promise-from';
export type {
  CacheRequest,
  ConnectionCheckRequest,
  IsolationLevel,
  QueryOptions,
  QueryRequest,
  BatchStatement,
  RequestIdentity,
  SessionAdmission,
  RequestOrRefusal,
  SessionOpenRequest,
  SessionQuery,
} from './request';
export { refuseIdleTimeout } from './sessions/idle-timeout';
export { planExecution } from './execution/plan';
export { isCopyFromStdin } from './execution/copy-from';
export type { ExecutionPlan, StrategyName, TransactionMode } from './execution/plan';
export { errorResponse, INTERNAL_ERROR_MESSAGE } from './execution/response';
export type {
  MultipleStatementsResponse,
  QueryErrorObject,
  QueryExecutionResult,
  QueryResponse,
  QueryResponseBody,
  ResponseFailure,
  TransactionFailureResponse,
} from './execution/response';
export * from './cache';
export * from './stats';
export type {
  CacheEntryRecord,
  CacheEntrySummary,
  CacheStore,
  CachedResult,
  CacheUsage,
  CounterTotals,
  EntryPlace,
  Freshness,
  InvalidationScope,
  SharedCounters,
  WriteMark,
} from './ports/cache-store';
export type { TargetPolicy } from './ports/target-policy';
export type { ConcurrencySlot, LimitDecision, LimitStore, RateRule } from './ports/limit-store';
export * from './limits';
export * from './json';
export type {
  ParseEvent,
  PoolAcquireEvent,
  RequestFailureEvent,
  RequestObserver,
  StatementEvent,
} from './ports/request-observer';
export { UNLIMITED_ROWS } from './request';
export * from './routing';
