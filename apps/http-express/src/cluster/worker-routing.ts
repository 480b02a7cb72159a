/**
 * A worker's part in requests that reach one worker for another (docs/decisions.md 10.35): it
 * forwards, through the primary, the session requests whose session it does not hold and runs
 * those forwarded to it; and it sends every cancel by request id to the primary, which tries it
 * in every worker (its own included) and counts the failures of each client (10.34).
 */
import type { ServerResponse } from 'node:http';
import type { QueryService } from '@sqlgate/core';
import type { Logger } from 'pino';
import { cancelsHere, type CancelDesk } from '../cancel-endpoint';
import type { ConfiguredTargets } from '../contract';
import type { CancelVerdict } from '../cancel-limit';
import { DisconnectSignal } from '../disconnect-signal';
import type { Observability } from '../observability/request-observation';
import { internalErrorAnswer } from '../query-endpoint';
import {
  runForwardedSessionRoute,
  type ForwardedAnswer,
  type SessionRouteRequest,
  type SessionsElsewhere,
} from '../session-endpoints';
import type { NoticeHandlers, RequestHandlers } from './ipc-channel';
import type { PrimaryNotices, PrimaryRequests, SessionAnswer, SessionRequest } from './protocol';
import { CANCEL_TIMEOUT_MS, type ChannelToPrimary } from './worker-channel';

/** How much longer than the primary a worker waits for a forwarded session request. */
const FORWARD_MARGIN_MS = 5_000;

export interface WorkerRoutingOptions {
  /** The channel to the primary. */
  primary: Pick<ChannelToPrimary, 'request' | 'notify'>;
  service: QueryService;
  logger: Logger;
  /** The worker's metrics and spans, which observe what it runs for another worker too. */
  observability: Observability | undefined;
  /** The primary's wait for a forwarded session request (sessionRequestTimeoutMs). */
  sessionRequestTimeoutMs: number;
  /** The targets a cancel's body may name: CONFIG_FILE's connections (docs/decisions.md 12). */
  cancelTargets?: ConfiguredTargets;
}

export class WorkerRouting implements CancelDesk, SessionsElsewhere {
  private nextForwardId = 1;
  /** Requests this worker runs for another, by the primary's id: their callers' signals. */
  private readonly running = new Map<number, DisconnectSignal>();
  private readonly primary: WorkerRoutingOptions['primary'];
  private readonly service: QueryService;
  private readonly logger: Logger;
  private readonly observability: Observability | undefined;
  private readonly sessionRequestTimeoutMs: number;
  private readonly cancelTargets: ConfiguredTargets | undefined;

  constructor(options: WorkerRoutingOptions) {
    this.cancelTargets = options.cancelTargets;
    this.primary = options.primary;
    this.service = options.service;
    this.logger = options.logger;
    this.observability = options.observability;
    this.sessionRequestTimeoutMs = options.sessionRequestTimeoutMs;
  }

  cancel(requestId: string, body: unknown, client: string): Promise<CancelVerdict> {
    return this.primary.request('cancelRequest', { requestId, body, client }, CANCEL_TIMEOUT_MS);
  }

  async forward(
    request: SessionRouteRequest,
    res: ServerResponse,
  ): Promise<ForwardedAnswer | undefined> {
    const forwardId = this.nextForwardId++;
    const gone = (): void => {
      if (!res.writableFinished) void this.primary.notify('callerGone', { forwardId });
    };
    res.on('close', gone);
    try {
      // Gone already, before its body was read: told after the request, so the primary knows it.
      if (res.closed) setImmediate(gone);
      const { answer } = await this.primary.request(
        'sessionRequest',
        { ...request, forwardId },
        this.sessionRequestTimeoutMs + FORWARD_MARGIN_MS,
      );
      return answer ?? undefined;
    } finally {
      res.off('close', gone);
    }
  }

  /** The answers to what the primary asks of this worker about sessions and cancels. */
  handlers(): Pick<
    RequestHandlers<PrimaryRequests>,
    'holdsSession' | 'runSessionRequest' | 'cancelLocal'
  > {
    return {
      holdsSession: ({ sessionId }) => ({ holds: this.service.knowsSession(sessionId) }),
      runSessionRequest: (request) => this.run(request),
      cancelLocal: ({ requestId, body }) => ({
        cancelled: cancelsHere(this.service, requestId, body, this.cancelTargets),
      }),
    };
  }

  noticeHandlers(): NoticeHandlers<PrimaryNotices> {
    return { callerGone: ({ forwardId }) => this.running.get(forwardId)?.abort() };
  }

  private async run(request: SessionRequest): Promise<SessionAnswer> {
    const signal = new DisconnectSignal();
    this.running.set(request.forwardId, signal);
    const requestId = request.requestId ?? undefined;
    const observer = this.observability?.observerFor(requestId);
    try {
      const rendered = await runForwardedSessionRoute(
        this.service,
        request,
        observer ? { signal, observer } : { signal },
      );
      if ('internal' in rendered) {
        return {
          ...internalErrorAnswer(this.logger, requestId, rendered.internal),
          serverTiming: null,
          consistencyToken: null,
          retryAfterSeconds: null,
        };
      }
      return {
        ...rendered,
        serverTiming: rendered.serverTiming ?? null,
        consistencyToken: rendered.consistencyToken ?? null,
        retryAfterSeconds: rendered.retryAfterSeconds ?? null,
      };
    } finally {
      this.running.delete(request.forwardId);
    }
  }
}
