/**
 * One JSON line per request (pino): request id, method, path, status, duration. The id comes from
 * X-Request-Id when the caller sends a sane one, else it is generated, and it is echoed back.
 * Bodies are never logged here: they hold passwords.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { sessionIdForLogs } from '@sqlgate/core';
import type { Logger } from 'pino';
import { setAnswerHeader } from './answer-headers';
import { loggedStatusOf, parserRefusalOf, wasCutBySqlgate } from './cut-answers';
import { whenClosed } from './response-closed';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The segment after `sessions`, wherever it is: `//api/sessions/<id>` reaches the log too (a 404). */
const SESSION_PATH = /(\/sessions\/+)([^/]+)/gi;

/**
 * The path as logs show it: a session id is the only credential its requests present, so only
 * its first characters are written (docs/decisions.md 10.26).
 */
export function pathForLogs(path: string): string {
  return path.replace(
    SESSION_PATH,
    (_all, prefix: string, id: string) => prefix + sessionIdForLogs(id),
  );
}

/** The request's id: the caller's X-Request-Id when it is sane, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Gives the request its id and logs it when it finishes. */
export function logRequest(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  requestPath: string,
): void {
  const id = requestIdOf(req);
  setAnswerHeader(res, 'X-Request-Id', id);
  if (!logger.isLevelEnabled('info')) return;
  const path = pathForLogs(requestPath);
  const started = performance.now();
  const durationMs = (): number => Math.round((performance.now() - started) * 1000) / 1000;
  // Logged at close: sent when the answer was written to the end; an answer never sent, or given
  // up while it was being written, ends here too.
  const log = (sent: boolean): void => {
    const cut = wasCutBySqlgate(res);
    const answered = sent || parserRefusalOf(res) !== undefined;
    logger.info(
      {
        reqId: id,
        method: req.method,
        path,
        status: loggedStatusOf(res),
        ...(cut ? { cut: true } : {}),
        // The client went away before the answer was sent (docs/decisions.md 10.7): nginx's 499.
        ...(answered || cut ? {} : { aborted: true }),
        durationMs: durationMs(),
      },
      'request',
    );
  };
  whenClosed(res, () => log(res.writableFinished));
}

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    logRequest(logger, req, res, req.path);
    next();
  };
}
