/**
 * POST /api/query: the body to the query service, the answer back as JSON with its status and a
 * Server-Timing header. Written against Node's own request and response, so the Express route and
 * the server's direct path share it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  INTERNAL_ERROR_MESSAGE,
  serializeResponse,
  withFields,
  type ExecuteOptions,
  type QueryService,
  type QueryServiceResponse,
  type RequestOrRefusal,
} from '@sqlgate/core';
import type { Logger } from 'pino';
import { httpStatusFor, RETRY_AFTER_SECONDS } from './http-status';
import { giveUpWhenStalled, streamStallLimit } from './answer-stall';
import { writeStream } from './stream-endpoint';
import { streamFormatOf } from './stream-formats';
import { observerOf } from './observability/request-observation';
import { abortOnDisconnect } from './disconnect-signal';
import { holdAsWritten, holdUntilClosed } from './held-answers';
import {
  answerHeader,
  CONSISTENCY_TOKEN,
  setAnswerHeader,
  writeAnswerHead,
} from './answer-headers';
import { readQueryBody } from './contract';
import { readAdmitted, type Access, type Admission } from './access/admission';

/** The Server-Timing value of an answer (docs/interface.md). */
export function serverTiming(
  poolWaitMs: number,
  executionMs: number,
  serialisationMs: number,
): string {
  return `pool;dur=${poolWaitMs.toFixed(3)}, exec;dur=${executionMs.toFixed(3)}, ser;dur=${serialisationMs.toFixed(3)}`;
}

/**
 * What the query service needs to know of an HTTP request: when its caller went away, who observes
 * it, and its id, which makes it cancellable from elsewhere (POST /api/requests/{id}/cancel). An
 * id the caller did not send reaches it in the answer's headers (docs/decisions.md 10.26).
 */
export function executeOptionsOf(res: ServerResponse): ExecuteOptions {
  const signal = abortOnDisconnect(res);
  const observer = observerOf(res);
  const requestId = answerHeader(res, 'X-Request-Id');
  const requestIdKnown = requestIdKnownOf(res, requestId);
  const holdResult = holdUntilClosed(res);
  const options: ExecuteOptions = observer
    ? { signal, observer, requestId, requestIdKnown, holdResult }
    : { signal, requestId, requestIdKnown, holdResult };
  // docs/decisions.md 13: read-your-writes on a connection with replicas.
  const token = res.req.headers[CONSISTENCY_TOKEN_REQUEST];
  if (typeof token === 'string' && token !== '') options.consistencyToken = token;
  return options;
}

/** The request and answer header carrying a consistency token (docs/interface.md), lower-cased. */
/** How Node names the request header (lower case). */
const CONSISTENCY_TOKEN_REQUEST = CONSISTENCY_TOKEN.toLowerCase();

/** Whether the caller chose the request's id, and so may cancel it by that id from the start. */
function requestIdKnownOf(
  res: ServerResponse,
  requestId: string | undefined,
): 'from-start' | 'when-streaming' {
  return requestId !== undefined && res.req.headers['x-request-id'] === requestId
    ? 'from-start'
    : 'when-streaming';
}

/** The request's id and whether its caller chose it, for a request run by another worker. */
export function requestIdOf(res: ServerResponse): {
  requestId: string | null;
  requestIdKnown: 'from-start' | 'when-streaming';
} {
  const requestId = answerHeader(res, 'X-Request-Id');
  return { requestId: requestId ?? null, requestIdKnown: requestIdKnownOf(res, requestId) };
}

/** Adds `header` to the response's Vary list (the browser guard may have named Origin). */
function varyOn(res: ServerResponse, header: string): void {
  const current = answerHeader(res, 'Vary');
  setAnswerHeader(res, 'Vary', current ? `${current}, ${header}` : header);
}

/** Sends `json` (already serialised) with its length, so headers and body leave in one write. */
export function writeJson(res: ServerResponse, status: number, json: string | Buffer): void {
  if (status === 503) setAnswerHeader(res, 'Retry-After', String(RETRY_AFTER_SECONDS));
  writeAnswerHead(res, status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': typeof json === 'string' ? Buffer.byteLength(json) : json.length,
  });
  res.end(json);
}

/**
 * Longer answers are written as bytes. Given a text, Node keeps it until the client has taken all
 * of it, and beside it a buffer of three bytes per character to encode it into: an answer its
 * client did not read held four times its size (docs/decisions.md 10.37).
 */
const WRITTEN_AS_BYTES_FROM = 64 * 1024;

/**
 * Answers a POST /api/query body, whole or streamed, once `access` admitted it (a body naming no
 * target runs on the server's default one, if it has one). A client that takes none of the answer for `answerStallMs`
 * (ANSWER_STALL_TIMEOUT_MS) is given up, a stream's after its own limit (answer-stall.ts).
 */
export function answerQuery(
  service: QueryService,
  logger: Logger,
  { body, access }: { body: unknown; access: Access },
  req: IncomingMessage,
  res: ServerResponse,
  answerStallMs: number,
): Promise<void> {
  if (logger.isLevelEnabled('debug')) {
    // SQL text only at debug, and never the rest of the body: it carries the password.
    logger.debug(
      {
        reqId: answerHeader(res, 'X-Request-Id'),
        sql: (body as { sql?: unknown } | undefined)?.sql,
      },
      'query',
    );
  }
  // JSON unless the client asks for a stream; a lone COPY ... TO STDOUT streams its data anyway.
  varyOn(res, 'Accept');
  const format = streamFormatOf(req.headers.accept);
  const watched = executeOptionsOf(res);
  const executeOptions =
    format === 'csv'
      ? withFields(watched, { oneStatement: true, rows: 'text' as const })
      : format === 'ndjson'
        ? withFields(watched, { rows: 'parsed' as const })
        : watched;
  // Chained rather than awaited: one turn of the microtasks fewer per request.
  const run = (admission: RequestOrRefusal<Admission>): Promise<void> =>
    service.stream(readAdmitted(admission, readQueryBody), executeOptions).then((answer) => {
      if (answer.streamed) {
        const stallLimitMs = streamStallLimit(body, answerStallMs);
        return writeStream(res, logger, answer, format, stallLimitMs, observerOf(res));
      }
      writeAnswer(res, logger, answer.response);
      giveUpWhenStalled(res, answerStallMs);
      return undefined;
    });
  const admission = access.admit(req, res, body);
  return admission instanceof Promise ? admission.then(run) : run(admission);
}

/**
 * A whole answer ready to be sent: its status, JSON and Server-Timing, or the defect that stopped
 * it. Made apart from the response, so that a worker can make it for a request another worker
 * received (docs/decisions.md 10.35).
 */
export type RenderedAnswer =
  | {
      status: number;
      json: string;
      serverTiming?: string;
      retryAfterSeconds?: number;
      /** Sqlgate-Consistency-Token of an answer that may have written (docs/decisions.md 13). */
      consistencyToken?: string;
    }
  | { internal: unknown };

/** A query's answer as JSON, with its status and Server-Timing. */
export function renderAnswer(response: QueryServiceResponse): RenderedAnswer {
  const { body: answer, failure, timings } = response;
  if (failure?.internal !== undefined) return { internal: failure.internal };
  const started = performance.now();
  try {
    const json = serializeResponse(answer);
    const timing = serverTiming(
      timings.poolWaitMs,
      timings.executionMs,
      performance.now() - started,
    );
    // Where it ran, after the existing entries, only on a connection with replicas.
    const served =
      response.servedBy === undefined ? timing : `${timing}, served;desc=${response.servedBy}`;
    const status = httpStatusFor(failure);
    // A session's request refused by its credentials' rate (docs/decisions.md 12) says when to retry.
    const retryAfter =
      status === 429 ? (answer as { retryAfterSeconds?: unknown }).retryAfterSeconds : undefined;
    const rendered: RenderedAnswer =
      typeof retryAfter === 'number'
        ? { status, json, serverTiming: served, retryAfterSeconds: retryAfter }
        : { status, json, serverTiming: served };
    if (response.consistencyToken !== undefined) {
      rendered.consistencyToken = response.consistencyToken;
    }
    return rendered;
  } catch (error) {
    // A body too large for one string, say: a defect of the bounds, never the caller's fault.
    return { internal: error };
  }
}

/** A whole answer as JSON, with its status and Server-Timing. */
export function writeAnswer(
  res: ServerResponse,
  logger: Logger,
  response: QueryServiceResponse,
): void {
  writeRendered(res, logger, renderAnswer(response));
}

export function writeRendered(res: ServerResponse, logger: Logger, rendered: RenderedAnswer): void {
  if ('internal' in rendered) {
    writeInternalError(res, logger, rendered.internal);
    return;
  }
  if (rendered.serverTiming !== undefined) {
    setAnswerHeader(res, 'Server-Timing', rendered.serverTiming);
  }
  if (rendered.retryAfterSeconds !== undefined) {
    setAnswerHeader(res, 'Retry-After', String(rendered.retryAfterSeconds));
  }
  if (rendered.consistencyToken !== undefined) {
    setAnswerHeader(res, CONSISTENCY_TOKEN, rendered.consistencyToken);
  }
  if (rendered.json.length < WRITTEN_AS_BYTES_FROM) {
    writeJson(res, rendered.status, rendered.json);
    return;
  }
  const bytes = Buffer.from(rendered.json);
  holdAsWritten(res, bytes.length);
  writeJson(res, rendered.status, bytes);
}

/**
 * docs/decisions.md 10.8: a defect answers 500 with the request id to quote; the detail goes to the
 * log line with that id, never to the caller.
 */
export function writeInternalError(res: ServerResponse, logger: Logger, error: unknown): void {
  const { status, json } = internalErrorAnswer(logger, answerHeader(res, 'X-Request-Id'), error);
  try {
    writeJson(res, status, json);
  } catch (failure) {
    // The answer cannot even be written (its head was refused): the connection ends instead.
    logger.error({ reqId: answerHeader(res, 'X-Request-Id'), err: failure }, 'internal error');
    res.destroy();
  }
}

/** The 500 of a defect, logged with the request's id. */
export function internalErrorAnswer(
  logger: Logger,
  requestId: string | undefined,
  error: unknown,
): { status: number; json: string } {
  logger.error({ reqId: requestId, err: error }, 'internal error');
  return { status: 500, json: JSON.stringify({ error: INTERNAL_ERROR_MESSAGE, requestId }) };
}
