/**
 * Watches each HTTP request for metrics, traces and the slow-query log (docs/decisions.md 10.25):
 * `begin` is called as a request arrives, and the use cases find its observer with `observerOf`.
 * With metrics and tracing off and no slow-query log, a request costs one WeakMap lookup.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParseEvent, PoolAcquireEvent, RequestObserver, StatementEvent } from '@sqlgate/core';
import type { Logger } from 'pino';
import { wasCutBySqlgate } from '../cut-answers';
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
    observers.set(res, new WatchedRequest(this, res, requestTrace));
    // 'close' follows 'finish' when the answer was sent; alone, the client went away first
    // (docs/decisions.md 10.7): nginx's 499, unless sqlgate cut the answer itself.
    res.once('close', () => {
      const status = res.writableFinished || wasCutBySqlgate(res) ? res.statusCode : 499;
      try {
        metrics?.httpRequest(
          route,
          req.method ?? 'GET',
          status,
          (performance.now() - started) / 1000,
        );
        requestTrace?.end(status);
      } catch (error) {
        this.observerFailed(error);
      }
    });
  }

  /** An observer's failure is its own defect: logged once, never the request's. */
  observerFailed(error: unknown): void {
    if (this.reportedFailure) return;
    this.reportedFailure = true;
    this.options.logger.error({ err: error }, 'observing a request failed');
  }

  get settings(): ObservabilityOptions {
    return this.options;
  }
}

/** One request's observer: metrics, its span's children, the slow-query log. */
class WatchedRequest implements HttpRequestObserver {
  private readonly traced: RequestObserver | undefined;

  constructor(
    private readonly watcher: Observability,
    private readonly res: ServerResponse,
    requestTrace: RequestTrace | undefined,
  ) {
    this.traced = requestTrace?.observer;
  }

  parsed(event: ParseEvent): void {
    try {
      this.traced?.parsed?.(event);
    } catch (error) {
      this.watcher.observerFailed(error);
    }
  }

  poolAcquired(event: PoolAcquireEvent): void {
    try {
      this.watcher.settings.metrics?.poolAcquired(event);
      this.traced?.poolAcquired?.(event);
    } catch (error) {
      this.watcher.observerFailed(error);
    }
  }

  statementEnded(event: StatementEvent): void {
    try {
      const { metrics, slowQueryMs } = this.watcher.settings;
      metrics?.statementEnded(event);
      this.traced?.statementEnded?.(event);
      if (slowQueryMs !== undefined && event.durationMs >= slowQueryMs && ranInDatabase(event)) {
        this.logSlow(event);
      }
    } catch (error) {
      this.watcher.observerFailed(error);
    }
  }

  streamed(format: 'ndjson' | 'csv' | 'copy', rows: number, bytes: number): void {
    try {
      this.watcher.settings.metrics?.streamed(format, rows, bytes);
    } catch (error) {
      this.watcher.observerFailed(error);
    }
  }

  private logSlow(event: StatementEvent): void {
    this.watcher.settings.logger.warn(
      {
        reqId: this.res.getHeader('X-Request-Id'),
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
}

function ranInDatabase(event: StatementEvent): boolean {
  return event.outcome === 'ok' || event.outcome === 'error';
}
