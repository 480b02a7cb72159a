/**
 * A request target Express cannot route: neither a path nor a URL (`http://[::1]evil/...`). Express
 * matches no route for it and answers its own HTML 404, without a request id or a log line; sqlgate
 * answers it a JSON 400 instead (docs/decisions.md 10.8), before Express sees it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { writeJson } from './query-endpoint';
import { logRequest } from './request-log';

function isMalformedTarget(url: string | undefined): boolean {
  if (url === undefined || url.charCodeAt(0) === 0x2f /* / */ || url === '*') return false;
  return !URL.canParse(url);
}

/** Answers a malformed target and says so; false for any other request, which goes on. */
export function answeredMalformedTarget(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  if (!isMalformedTarget(req.url)) return false;
  logRequest(logger, req, res, 'malformed');
  req.resume();
  writeJson(res, 400, JSON.stringify({ error: 'Malformed request target' }));
  return true;
}
