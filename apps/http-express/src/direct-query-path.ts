/**
 * The standalone server answers POST /api/query without Express's router and middleware chain:
 * it is the one hot path, and routing a request through a dozen layers costs more than sqlgate's
 * own parsing and planning. It does what the app's route does, through the same functions
 * (request id and log, body reader, answerQuery); every other request goes to the app.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { QueryService } from '@sqlgate/core';
import type { Logger } from 'pino';
import { BodyError, readJsonBody } from './json-body';
import { answerQuery, writeJson } from './query-endpoint';
import { logRequest } from './request-log';

export interface DirectQueryPathOptions {
  service: QueryService;
  logger: Logger;
  maxBodyBytes: number;
}

const QUERY_PATH = '/api/query';

export function withDirectQueryPath(
  app: RequestListener,
  options: DirectQueryPathOptions,
): RequestListener {
  const { service, logger, maxBodyBytes } = options;
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    logRequest(logger, req, res, QUERY_PATH);
    let body: unknown;
    try {
      body = await readJsonBody(req, maxBodyBytes);
    } catch (error) {
      const { status, message } =
        error instanceof BodyError
          ? error
          : { status: 400, message: 'Request body could not be read' };
      writeJson(res, status, JSON.stringify({ error: message }));
      return;
    }
    await answerQuery(service, logger, body, req, res);
  };
  return (req, res) => {
    if (req.method === 'POST' && req.url === QUERY_PATH) {
      answer(req, res).catch(() => {
        if (!res.headersSent)
          writeJson(res, 500, JSON.stringify({ error: 'Internal server error' }));
        else res.destroy();
      });
      return;
    }
    app(req, res);
  };
}
