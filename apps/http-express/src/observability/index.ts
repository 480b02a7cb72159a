/**
 * Metrics, spans and the slow-query log of one app (docs/decisions.md 10.25): built once, shared by
 * the app's routes and the standalone server's direct query path.
 */
import type { QueryService } from '@sqlgate/core';
import type { Logger } from 'pino';
import { ServiceMetrics } from './metrics';
import { Observability } from './request-observation';

export { observerOf, type HttpRequestObserver } from './request-observation';
export { ServiceMetrics } from './metrics';

export interface ObservabilitySettings {
  /** GET /metrics and the metrics behind it (METRICS). */
  metrics: boolean;
  /** Spans through the host's OpenTelemetry SDK, if one is registered (TRACING). */
  tracing: boolean;
  /** Spans carry the statement's text, literals replaced (OTEL_SQLGATE_STATEMENT). */
  traceStatementText: boolean;
  /** Statements slower than this many milliseconds are logged at warn (SLOW_QUERY_MS). */
  slowQueryMs: number;
  /**
   * A result cache shared by every process (QUERY_CACHE_REDIS_URL): the workers of WORKERS=n
   * report the same entries, so their cache gauges are not added up.
   */
  queryCacheRedisUrl?: string;
}

export const DEFAULT_OBSERVABILITY: ObservabilitySettings = {
  metrics: true,
  tracing: true,
  traceStatementText: false,
  slowQueryMs: 1000,
};

export interface AppObservability {
  /** Absent with metrics off: GET /metrics then answers 404. */
  metrics?: ServiceMetrics;
  watcher: Observability;
}

export function createObservability(
  service: QueryService,
  logger: Logger,
  settings: ObservabilitySettings,
): AppObservability {
  const metrics = settings.metrics
    ? new ServiceMetrics(service, { sharedCache: settings.queryCacheRedisUrl !== undefined })
    : undefined;
  return {
    ...(metrics ? { metrics } : {}),
    watcher: new Observability({
      logger,
      ...(metrics ? { metrics } : {}),
      ...(settings.tracing ? { tracing: { statementText: settings.traceStatementText } } : {}),
      slowQueryMs: settings.slowQueryMs,
    }),
  };
}
