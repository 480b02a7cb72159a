/**
 * A request target Express cannot route: neither a path nor a URL (`http://[::1]evil/...`), or `*`
 * (the asterisk form, RFC 9112 3.2.4), which only OPTIONS may use. Express matches no route for
 * these and answers its own HTML 404, without a request id or a log line; sqlgate answers a JSON
 * 400 instead (docs/decisions.md 5), and `OPTIONS *`, a question about the server as a whole, 204
 * with the methods it serves.
 *
 * Where (docs/decisions.md 10.53): the app's first middleware answers every such target Express
 * can still read a path from (`*`, `http://host:99999/x`). One whose URL Express's router cannot
 * parse at all (`http://[::1]evil/...`, `http://`) reaches no middleware: the router hands it
 * straight to the app's final handler. The standalone server answers those in its own listener,
 * before the app.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { ROUTES } from './contract';
import type { Logger } from 'pino';
import type { Observability } from './observability/request-observation';
import { writeJson } from './query-endpoint';
import { logRequest } from './request-log';

/** The methods some route of the contract's table serves, and OPTIONS (CORS preflights). */
const SERVED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
  .filter(
    (method) =>
      method === 'OPTIONS' || ROUTES.some((route) => route.method.toUpperCase() === method),
  )
  .join(', ');

function isMalformedTarget(url: string | undefined): boolean {
  if (url === undefined || url.charCodeAt(0) === 0x2f /* / */) return false;
  return url === '*' || !URL.canParse(url);
}

/**
 * Answers a target Express cannot route (a malformed one, the asterisk form) and says so; false
 * for any other request, which goes on. Logged, and counted under the route `unmatched`.
 */
export function answeredUnroutableTarget(
  logger: Logger,
  observability: Observability | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  if (req.url === '*' && req.method === 'OPTIONS') {
    logRequest(logger, req, res, '*');
    observability?.begin(req, res, 'unmatched');
    req.resume();
    res.writeHead(204, { Allow: SERVED_METHODS }).end();
    return true;
  }
  if (!isMalformedTarget(req.url)) return false;
  logRequest(logger, req, res, 'malformed');
  observability?.begin(req, res, 'unmatched');
  req.resume();
  writeJson(res, 400, JSON.stringify({ error: 'Malformed request target' }));
  return true;
}

/** The app's first middleware: an unroutable target its router could still read is answered. */
export function answerUnroutableTargets(
  logger: Logger,
  observability?: Observability,
): RequestHandler {
  return (req, res, next) => {
    if (!answeredUnroutableTarget(logger, observability, req, res)) next();
  };
}

/**
 * A listener that answers every unroutable target before `app`, those Express's router cannot
 * read included (they would reach none of the app's middleware).
 */
export function withUnroutableTargetsAnswered(
  app: RequestListener,
  logger: Logger,
  observability?: Observability,
): RequestListener {
  return (req, res) => {
    if (!answeredUnroutableTarget(logger, observability, req, res)) app(req, res);
  };
}
