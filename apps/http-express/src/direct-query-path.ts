/**
 * The standalone server answers POST /api/query and POST /sql without Express's router and
 * middleware chain: they are the hot paths, and routing a request through a dozen layers costs
 * more than sqlgate's own parsing and planning (docs/decisions.md 11.2). It does what the app's
 * routes do, through the same functions (request id and log, body reader, answerQuery,
 * answerNeonQuery); every other request, a malformed target included, goes to the app.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { promiseFrom, type QueryService } from '@sqlgate/core';
import type { Logger } from 'pino';
import { keepHeadersAside } from './answer-headers';
import { createBrowserGuard, type BrowserGuardOptions } from './browser-guard';
import { answerBodyError, BodyError, readJsonBody, type BodyLimits } from './json-body';
import { answerQuery, writeInternalError } from './query-endpoint';
import { answerNeonQuery } from './neon-endpoint';
import { DEFAULT_ANSWER_STALL_TIMEOUT_MS } from './answer-stall';
import { logRequest } from './request-log';
import type { Observability } from './observability/request-observation';
import { directAccess, type Access } from './access/admission';

export interface DirectQueryPathOptions extends BrowserGuardOptions {
  service: QueryService;
  logger: Logger;
  /** MAX_BODY_BYTES and BODY_TIMEOUT_MS. */
  bodyLimits: BodyLimits;
  /** ANSWER_STALL_TIMEOUT_MS; default 60 s, as for the app. */
  answerStallTimeoutMs?: number;
  /** The app's metrics, spans and slow-query log (`createObservability`); absent: none. */
  observability?: Observability;
  /** Who may run what (docs/decisions.md 12), as for the app; default: the SPEC form only. */
  access?: Access;
}

const QUERY_PATH = '/api/query';
const NEON_PATH = '/sql';

/** The path of a request target, without its query string (`/api/query?x=1` is `/api/query`). */
function pathOf(url: string | undefined): string | undefined {
  const query = url?.indexOf('?') ?? -1;
  return query === -1 ? url : url?.slice(0, query);
}

export function withDirectQueryPath(
  app: RequestListener,
  options: DirectQueryPathOptions,
): RequestListener {
  const { service, logger, bodyLimits, observability } = options;
  const access = options.access ?? directAccess();
  const answerStallTimeoutMs = options.answerStallTimeoutMs ?? DEFAULT_ANSWER_STALL_TIMEOUT_MS;
  const admit = createBrowserGuard(options);
  const neonLimits = { ...bodyLimits, answerStallMs: answerStallTimeoutMs };
  // Chained rather than awaited: each async function on a request's way costs it a turn of the
  // microtasks.
  const answer = (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    keepHeadersAside(res);
    logRequest(logger, req, res, path);
    observability?.begin(req, res, path);
    if (!admit(req, res)) {
      req.resume();
      return Promise.resolve();
    }
    if (path === NEON_PATH) return answerNeonQuery(service, logger, neonLimits, access, req, res);
    return readJsonBody(req, bodyLimits).then(
      (body) => answerQuery(service, logger, { body, access }, req, res, answerStallTimeoutMs),
      (error: unknown) =>
        answerBodyError(
          res,
          error instanceof BodyError ? error : new BodyError(400, 'Request body could not be read'),
        ),
    );
  };
  return (req, res) => {
    const path = req.method === 'POST' ? pathOf(req.url) : undefined;
    if (path === QUERY_PATH || path === NEON_PATH) {
      // A defect before the first promise is answered like one after it, never thrown at Node.
      promiseFrom(() => answer(req, res, path)).catch((error: unknown) => {
        if (!res.headersSent) writeInternalError(res, logger, error);
        else res.destroy();
      });
      return;
    }
    app(req, res);
  };
}
