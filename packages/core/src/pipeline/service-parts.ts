/**
 * What every request of one service shares: its ports, its settings, the result cache, the
 * counters, and the registries of running requests and sessions. Built once from the options.
 */
import { DEFAULT_CACHE_MAX_BYTES, DEFAULT_CACHE_TTL_MS, ResultCache } from '../cache';
import type { ExecutionSettings } from '../execution/context';
import { SharedResultBudget } from '../execution/result-budget';
import { RunningRequests } from '../execution/running-requests';
import { createParseMemo, type ParseMemo } from '../parser/parse-memo';
import type { SharedCounters } from '../ports/cache-store';
import { systemClock, type Clock } from '../ports/clock';
import type { ConnectionProvider } from '../ports/connections';
import { DEFAULT_MAX_RESULT_BYTES, type QueryServiceOptions } from '../service-types';
import { DEFAULT_SESSION_LIMITS, SessionRegistry } from '../sessions/session-registry';
import { QueryStatistics } from '../stats';

export interface ServiceParts {
  options: QueryServiceOptions;
  connections: ConnectionProvider;
  clock: Clock;
  /** Statements per request (MAX_STATEMENTS). */
  maxStatements: number;
  settings: ExecutionSettings;
  counters: SharedCounters;
  parse: ParseMemo;
  /** Absent without a cache store: nothing is cached. */
  cache: ResultCache | undefined;
  running: RunningRequests;
  sessions: SessionRegistry;
}

export function serviceParts(options: QueryServiceOptions): ServiceParts {
  const { connections } = options;
  const clock = options.clock ?? systemClock;
  return {
    options,
    connections,
    clock,
    maxStatements: options.maxStatements ?? 10_000,
    settings: executionSettings(options),
    counters: options.counters ?? new QueryStatistics(),
    parse: createParseMemo(),
    cache: options.cacheStore
      ? new ResultCache({
          store: options.cacheStore,
          defaultTtlMs: options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
          maxEntryBytes: options.cacheMaxEntryBytes ?? DEFAULT_CACHE_MAX_BYTES,
          enabledByDefault: options.cacheByDefault ?? false,
          clock,
        })
      : undefined,
    running: new RunningRequests(),
    sessions: new SessionRegistry(
      connections,
      { ...DEFAULT_SESSION_LIMITS, ...options.sessions },
      clock,
    ),
  };
}

function executionSettings(options: QueryServiceOptions): ExecutionSettings {
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  return {
    defaultMaxRows: options.defaultMaxRows ?? 10_000,
    alwaysResetSession: options.alwaysResetSession ?? false,
    maxParallelReads: options.maxParallelReads ?? 5,
    maxResultBytes,
    ...(options.maxResultBytesTotal === undefined
      ? {}
      : {
          sharedResultBudget: new SharedResultBudget(options.maxResultBytesTotal, maxResultBytes),
        }),
    nameStatements: !(options.alwaysResetSession ?? false),
  };
}
