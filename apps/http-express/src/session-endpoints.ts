/**
 * The session routes (docs/decisions.md 10.26): open, run in, cancel in and close a session. With
 * WORKERS=n a request may reach a worker other than the one holding its session; it is then run
 * where the session lives, and answered here as that worker answered it (10.35).
 */
import type { ServerResponse } from 'node:http';
import {
  serializeResponse,
  type AbortSignalLike,
  type QueryService,
  type RequestObserver,
  type ServiceAnswer,
} from '@sqlgate/core';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { readAdmitted, type Access } from './access/admission';
import { giveUpWhenStalled } from './answer-stall';
import { httpStatusFor } from './http-status';
import {
  readSessionOpenBody,
  readSessionQueryBody,
  requestOrRefusal,
  singleHeader,
} from './contract';
import {
  executeOptionsOf,
  renderAnswer,
  requestIdOf,
  writeAnswer,
  writeInternalError,
  writeRendered,
  type RenderedAnswer,
} from './query-endpoint';

/** What a session route asks of the worker holding the session. */
export interface SessionRouteRequest {
  sessionId: string;
  operation: 'query' | 'cancelQuery' | 'close';
  /** The body of a query; null for the others. */
  body: unknown;
  requestId: string | null;
  requestIdKnown: 'from-start' | 'when-streaming';
}

/** An answer the worker holding the session made. */
export interface ForwardedAnswer {
  status: number;
  json: string;
  serverTiming: string | null;
  consistencyToken: string | null;
  retryAfterSeconds: number | null;
}

/** The other workers of WORKERS=n, for sessions this one does not hold. */
export interface SessionsElsewhere {
  /**
   * Runs the request in the worker that holds the session; undefined when none does. `res` going
   * away before its answer cancels the request there, as it would here (10.7).
   */
  forward(request: SessionRouteRequest, res: ServerResponse): Promise<ForwardedAnswer | undefined>;
}

/** A session use case's answer: its status (`okStatus` on success) and JSON. */
export function renderServiceAnswer<T>(answer: ServiceAnswer<T>, okStatus = 200): RenderedAnswer {
  const { failure } = answer;
  if (failure?.internal !== undefined) return { internal: failure.internal };
  try {
    return {
      status: failure ? httpStatusFor(failure) : okStatus,
      json: serializeResponse(answer.body),
    };
  } catch (error) {
    return { internal: error };
  }
}

/**
 * Runs a session route another worker received: `signal` aborts when its caller goes away, and
 * `observer` sees its statements here (the receiving worker counts the HTTP request).
 */
export async function runForwardedSessionRoute(
  service: QueryService,
  request: SessionRouteRequest,
  watched: { signal: AbortSignalLike; observer?: RequestObserver },
): Promise<RenderedAnswer> {
  const { sessionId, requestId, requestIdKnown } = request;
  switch (request.operation) {
    case 'query':
      return renderAnswer(
        await service.executeInSession(
          sessionId,
          requestOrRefusal(() => readSessionQueryBody(request.body)),
          requestId === null ? watched : { ...watched, requestId, requestIdKnown },
        ),
      );
    case 'cancelQuery':
      return renderServiceAnswer(service.cancelSessionQuery(sessionId));
    case 'close':
      return renderServiceAnswer(await service.closeSession(sessionId));
  }
}

/**
 * The session routes. `elsewhere` are the other workers of WORKERS=n; a session opens once `access`
 * admitted it (a body naming no target opens on the server's default one, docs/decisions.md 10.48).
 */
export function sessionHandlers(
  service: QueryService,
  logger: Logger,
  answerStallMs: number,
  { elsewhere, access }: { elsewhere: SessionsElsewhere | undefined; access: Access },
): Record<
  'openSession' | 'executeSessionQuery' | 'cancelSessionQuery' | 'closeSession',
  RequestHandler
> {
  /** Answers a route whose session another worker holds; false when none does. */
  const answeredElsewhere = async (
    req: Request,
    res: Response,
    operation: SessionRouteRequest['operation'],
  ): Promise<boolean> => {
    const sessionId = String(req.params.sessionId ?? '');
    if (!elsewhere || service.knowsSession(sessionId)) return false;
    let answer: ForwardedAnswer | undefined;
    try {
      answer = await elsewhere.forward(
        {
          sessionId,
          operation,
          body: operation === 'query' ? (req.body ?? null) : null,
          ...requestIdOf(res),
        },
        res,
      );
    } catch (error) {
      // The worker holding the session died with the request, or the primary did not answer.
      writeInternalError(res, logger, error);
      return true;
    }
    if (answer === undefined) return false;
    writeRendered(res, logger, renderedOf(answer));
    if (operation === 'query') giveUpWhenStalled(res, answerStallMs);
    return true;
  };

  return {
    openSession: async (req, res) => {
      const request = readAdmitted(
        await access.admit(req, res, req.body, 'session'),
        (body, targets) =>
          readSessionOpenBody(
            body,
            service.sessionLimits.idleTimeoutMs,
            targets,
            singleHeader(req.headersDistinct, 'Neon-Connection-String'),
          ),
      );
      const opened = await service.openSession(request, executeOptionsOf(res));
      writeRendered(res, logger, renderServiceAnswer(opened, 201));
    },
    executeSessionQuery: async (req, res) => {
      if (await answeredElsewhere(req, res, 'query')) return;
      const sessionId = String(req.params.sessionId ?? '');
      const query = requestOrRefusal(() => readSessionQueryBody(req.body));
      writeAnswer(
        res,
        logger,
        await service.executeInSession(sessionId, query, executeOptionsOf(res)),
      );
      giveUpWhenStalled(res, answerStallMs);
    },
    cancelSessionQuery: async (req, res) => {
      if (await answeredElsewhere(req, res, 'cancelQuery')) return;
      const sessionId = String(req.params.sessionId ?? '');
      writeRendered(res, logger, renderServiceAnswer(service.cancelSessionQuery(sessionId)));
    },
    closeSession: async (req, res) => {
      if (await answeredElsewhere(req, res, 'close')) return;
      const sessionId = String(req.params.sessionId ?? '');
      writeRendered(res, logger, renderServiceAnswer(await service.closeSession(sessionId)));
    },
  };
}

/** A forwarded answer as the worker that ran it rendered it: its nulls are headers it had not. */
function renderedOf({
  serverTiming,
  consistencyToken,
  retryAfterSeconds,
  ...rest
}: ForwardedAnswer): RenderedAnswer {
  return {
    ...rest,
    ...(serverTiming === null ? {} : { serverTiming }),
    ...(consistencyToken === null ? {} : { consistencyToken }),
    ...(retryAfterSeconds === null ? {} : { retryAfterSeconds }),
  };
}
