/**
 * Watches each HTTP request for metrics, traces and the slow-query log (docs/decisions.md 10.25):
 * `begin` is called as a request arrives, and the use cases find its observer with `observerOf`.
 * With metrics and tracing off and no slow-query log, a request costs one WeakMap lookup.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PoolAcquireEvent, RequestObserver, StatementEvent } from '@sqlgate/core';
import type { Logger } from 'pino';
import type { ServiceMetrics } from './metrics';
import { startRequestTrace, type RequestTrace, type TracingOptions } from './tracing';

/** A request's observer, with what only the HTTP layer sees. */
export interface HttpRequestObserver extends RequestObserver {
  /** A streamed answer ended (whole or cut): its rows and bytes. */
  streamed(format: 'ndjson' | 'csv' | 'copy', rows: number, bytes: number): void;
}

export interface ObservabilityOptions {
  logger: Logger;
  /** Absent: no metrics (METRICS=off). */
  metrics?: ServiceMetrics;
  /** Absent: no spans (TRACING=off). */
  tracing?: TracingOptions;
  /** Statements slower than this are logged at warn (SLOW_QUERY_MS); absent: never. */
  slowQueryMs?: number;
}

const observers = new WeakMap<ServerResponse, HttpRequestObserver>();

/** The observer `begin` gave this request, if any. */
export function observerOf(res: ServerResponse): HttpRequestObserver | undefined {
  return observers.get(res);
}

export class Observability {
  private reportedFailure = false;

  constructor(private readonly options: ObservabilityOptions) {}

  /** Starts watching a request; `route` is its route of the route table, or `unmatched`. */
  begin(req: IncomingMessage, res: ServerResponse, route: string): void {
    const { metrics, tracing, slowQueryMs } = this.options;
    if (!metrics && !tracing && slowQueryMs === undefined) return;
    const started = performance.now();
    const requestTrace = tracing ? startRequestTrace(req, route, tracing) : undefined;
    observers.set(res, this.observerFor(res, requestTrace));
    let ended = false;
    const end = (status: number): void => {
      if (ended) return;
      ended = true;
      this.guarded(() => {
        metrics?.httpRequest(
          route,
          req.method ?? 'GET',
          status,
          (performance.now() - started) / 1000,
        );
        requestTrace?.end(status);
      });
    };
    res.once('finish', () => end(res.statusCode));
    // The client went away before the answer was sent (docs/decisions.md 10.7): nginx's 499.
    res.once('close', () => end(res.writableFinished ? res.statusCode : 499));
  }

  private observerFor(
    res: ServerResponse,
    requestTrace: RequestTrace | undefined,
  ): HttpRequestObserver {
    const { metrics, slowQueryMs, logger } = this.options;
    const traced = requestTrace?.observer;
    return {
      parsed: (event) => this.guarded(() => traced?.parsed?.(event)),
      poolAcquired: (event: PoolAcquireEvent) =>
        this.guarded(() => {
          metrics?.poolAcquired(event);
          traced?.poolAcquired?.(event);
        }),
      statementEnded: (event: StatementEvent) =>
        this.guarded(() => {
          metrics?.statementEnded(event);
          traced?.statementEnded?.(event);
          if (
            slowQueryMs !== undefined &&
            event.durationMs >= slowQueryMs &&
            ranInDatabase(event)
          ) {
            logger.warn(
              {
                reqId: res.getHeader('X-Request-Id'),
                poolId: event.poolId,
                index: event.index,
                command: event.command,
                outcome: event.outcome,
                ...(event.sqlState ? { sqlState: event.sqlState } : {}),
                durationMs: event.durationMs,
                statement: event.normalisedText,
              },
              'slow statement',
            );
          }
        }),
      streamed: (format, rows, bytes) => this.guarded(() => metrics?.streamed(format, rows, bytes)),
    };
  }

  /** An observer's failure is its own defect: logged once, never the request's. */
  private guarded(report: () => void): void {
    try {
      report();
    } catch (error) {
      if (this.reportedFailure) return;
      this.reportedFailure = true;
      this.options.logger.error({ err: error }, 'observing a request failed');
    }
  }
}

function ranInDatabase(event: StatementEvent): boolean {
  return event.outcome === 'ok' || event.outcome === 'error';
}
