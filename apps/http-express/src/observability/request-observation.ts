/**
 * Watches each HTTP request for metrics, traces and the slow-query log (docs/decisions.md 10.25):
 * `begin` is called as a request arrives, and the use cases find its observer with `observerOf`.
 * With metrics and tracing off and no slow-query log, a request costs one property read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  ParseEvent,
  PoolAcquireEvent,
  RequestFailureEvent,
  RequestObserver,
  StatementEvent,
} from '@sqlgate/core';
import type { Logger } from 'pino';
import { answerHeader } from '../answer-headers';
import { loggedStatusOf } from '../cut-answers';
import { commandLabel } from './labels';
import type { ServiceMetrics } from './metrics';
import { startRequestTrace, type TracingOptions } from './tracing';
import { whenClosed } from '../response-closed';

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

/**
 * Where a response keeps its observer. A property, not a WeakMap keyed by the response: every
 * young-generation collection must walk a WeakMap's entries whose keys are young, and a response
 * always is; measured, the WeakMap multiplied the collector's time per request by fifteen.
 */
const OBSERVER = Symbol('sqlgate.observer');

type ObservedResponse = ServerResponse & { [OBSERVER]?: HttpRequestObserver };

/** The observer `begin` gave this request, if any. */
export function observerOf(res: ServerResponse): HttpRequestObserver | undefined {
  return (res as ObservedResponse)[OBSERVER];
}

export class Observability {
  private reportedFailure = false;
  /**
   * One function for every request. A closure made in `begin` would share begin's scope, which
   * holds the request and the response: core keeps the observer, so an execution context promoted
   * to the old generation would keep every young object of the request's HTTP exchange alive
   * through it, and the young-generation collector copied them all (measured: twice its time per
   * request).
   */
  private readonly failed = (error: unknown): void => this.observerFailed(error);

  constructor(private readonly options: ObservabilityOptions) {}

  /** Starts watching a request; `route` is its route of the route table, or `unmatched`. */
  begin(req: IncomingMessage, res: ServerResponse, route: string): void {
    const { metrics, tracing, slowQueryMs } = this.options;
    if (!metrics && !tracing && slowQueryMs === undefined) return;
    const requestTrace = tracing ? startRequestTrace(req, route, tracing) : undefined;
    // The request id, not the response: see `failed`.
    const requestId = answerHeader(res, 'X-Request-Id');
    (res as ObservedResponse)[OBSERVER] = new WatchedRequest(
      this.options,
      typeof requestId === 'string' ? requestId : undefined,
      requestTrace?.observer,
      this.failed,
    );
    if (!metrics && !requestTrace) return;
    const started = performance.now();
    // 'close' follows 'finish' when the answer was sent; alone, the client went away first
    // (docs/decisions.md 10.7): nginx's 499, unless sqlgate cut the answer itself.
    whenClosed(res, () => {
      const status = loggedStatusOf(res);
      try {
        metrics?.httpRequest(route, req.method, status, (performance.now() - started) / 1000);
        requestTrace?.end(status);
      } catch (error) {
        this.observerFailed(error);
      }
    });
  }

  /**
   * The observer of a request another worker received and this one runs (a session's, WORKERS=n,
   * docs/decisions.md 10.35): its statements' metrics and slow-query lines are this worker's; the
   * receiving worker counts the HTTP request and has its span.
   */
  observerFor(requestId: string | undefined): HttpRequestObserver | undefined {
    const { metrics, slowQueryMs } = this.options;
    if (!metrics && slowQueryMs === undefined) return undefined;
    return new WatchedRequest(this.options, requestId, undefined, this.failed);
  }

  /** An observer's failure is its own defect: logged once, never the request's. */
  private observerFailed(error: unknown): void {
    if (this.reportedFailure) return;
    this.reportedFailure = true;
    this.options.logger.error({ err: error }, 'observing a request failed');
  }
}

/** One request's observer: metrics, its span's children, the slow-query log. */
class WatchedRequest implements HttpRequestObserver {
  constructor(
    private readonly options: ObservabilityOptions,
    private readonly requestId: string | undefined,
    private readonly traced: RequestObserver | undefined,
    private readonly failed: (error: unknown) => void,
  ) {}

  parsed(event: ParseEvent): void {
    try {
      this.traced?.parsed?.(event);
    } catch (error) {
      this.failed(error);
    }
  }

  poolAcquired(event: PoolAcquireEvent): void {
    try {
      this.options.metrics?.poolAcquired(event);
      this.traced?.poolAcquired?.(event);
    } catch (error) {
      this.failed(error);
    }
  }

  statementEnded(event: StatementEvent): void {
    try {
      const { metrics, slowQueryMs } = this.options;
      metrics?.statementEnded(event);
      this.traced?.statementEnded?.(event);
      if (slowQueryMs !== undefined && event.durationMs >= slowQueryMs && ranInDatabase(event)) {
        this.logSlow(event);
      }
    } catch (error) {
      this.failed(error);
    }
  }

  requestFailed(event: RequestFailureEvent): void {
    try {
      this.options.metrics?.requestFailed(event);
      this.traced?.requestFailed?.(event);
    } catch (error) {
      this.failed(error);
    }
  }

  streamed(format: 'ndjson' | 'csv' | 'copy', rows: number, bytes: number): void {
    try {
      this.options.metrics?.streamed(format, rows, bytes);
    } catch (error) {
      this.failed(error);
    }
  }

  private logSlow(event: StatementEvent): void {
    this.options.logger.warn(
      {
        reqId: this.requestId,
        poolId: event.poolId,
        index: event.index,
        command: commandLabel(event.command),
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
