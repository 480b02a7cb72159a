/**
 * The Express adapter: HTTP in, a use case of the query service, status and JSON out. Nothing else.
 * `createApp` builds the app without listening, so it can be mounted under any path of another app.
 */
import { ZERO_CACHE_STATS, type QueryService } from '@sqlgate/core';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import pino, { type Logger } from 'pino';
import { httpStatusFor } from './http-status';
import { BodyError, readJsonBody } from './json-body';
import { answerQuery, writeJson } from './query-endpoint';
import { openApiDocument } from './openapi';
import { requestLog } from './request-log';
import { requireStatsToken } from './stats-token';

export interface AppOptions {
  service: QueryService;
  /** Largest accepted request body in bytes (MAX_BODY_BYTES). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Where request lines go. Default: nowhere (an embedded app logs through its host). */
  logger?: Logger;
  /** When set, the statistics endpoints require `Authorization: Bearer <statsToken>` (STATS_TOKEN). */
  statsToken?: string;
}

/** Sends a JSON body with its status; a 503 also says when to come back. */
function sendJson(res: Response, status: number, body: unknown): void {
  writeJson(res, status, JSON.stringify(body));
}

/** Routes and the methods they answer, for 404 and 405 with Allow. */
const ROUTES: Record<string, string[]> = {
  '/api/query': ['POST'],
  '/api/test-connection': ['POST'],
  '/api/stats/pools': ['GET'],
  '/api/stats/cache': ['GET', 'DELETE'],
  '/api/openapi.json': ['GET'],
  '/healthz': ['GET'],
};

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Parses JSON bodies of POST, PUT and PATCH requests into `req.body`. */
function jsonBody(limit: number): RequestHandler {
  return (req, _res, next) => {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') {
      next();
      return;
    }
    readJsonBody(req, limit).then((body) => {
      req.body = body;
      next();
    }, next);
  };
}

export function createApp(options: AppOptions): express.Express {
  const { service } = options;
  const logger = options.logger ?? pino({ level: 'silent' });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestLog(logger));
  app.use(jsonBody(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  if (options.statsToken) app.use('/api/stats', requireStatsToken(options.statsToken));

  app.post('/api/query', (req: Request, res: Response) =>
    answerQuery(service, logger, req.body, req, res),
  );

  app.post('/api/test-connection', async (req: Request, res: Response) => {
    const result = await service.checkConnection(req.body);
    sendJson(res, 'failure' in result ? httpStatusFor(result.failure) : 200, result.body);
  });

  app.get('/api/stats/pools', (_req: Request, res: Response) => {
    try {
      sendJson(res, 200, { stats: service.poolStats() });
    } catch {
      sendJson(res, 500, { error: 'Failed to retrieve pool statistics', stats: [] });
    }
  });

  app.get('/api/stats/cache', async (_req: Request, res: Response) => {
    try {
      sendJson(res, 200, await service.cacheStatistics());
    } catch {
      sendJson(res, 500, {
        error: 'Failed to retrieve cache statistics',
        stats: { ...ZERO_CACHE_STATS },
        entries: [],
      });
    }
  });

  app.delete('/api/stats/cache', async (_req: Request, res: Response) => {
    try {
      await service.clearCache();
      sendJson(res, 200, { success: true, message: 'Cache cleared successfully' });
    } catch {
      sendJson(res, 500, { error: 'Failed to clear cache' });
    }
  });

  app.get('/api/openapi.json', (_req: Request, res: Response) => {
    sendJson(res, 200, openApiDocument);
  });

  app.get('/healthz', (_req: Request, res: Response) => {
    sendJson(res, 200, { status: 'ok' });
  });

  app.use((req: Request, res: Response) => {
    const allowed = ROUTES[req.path];
    if (allowed) {
      res.setHeader('Allow', allowed.join(', '));
      sendJson(res, 405, { error: `Method ${req.method} not allowed on ${req.path}` });
      return;
    }
    sendJson(res, 404, { error: `Not found: ${req.method} ${req.path}` });
  });

  app.use(jsonErrors);
  return app;
}

/** Every error is JSON: never Express's HTML page, never a stack trace. */
const jsonErrors: ErrorRequestHandler = (error: unknown, _req, res, next) => {
  if (res.headersSent) {
    next(error);
    return;
  }
  if (error instanceof BodyError) {
    sendJson(res, error.status, { error: error.message });
  } else if (
    typeof (error as { status?: unknown }).status === 'number' &&
    (error as { status: number }).status < 500
  ) {
    sendJson(res, (error as { status: number }).status, { error: (error as Error).message });
  } else {
    sendJson(res, 500, { error: 'Internal server error' });
  }
};
