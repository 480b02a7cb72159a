/**
 * The Express adapter: HTTP in, a use case of the query service, status and JSON out. Nothing else.
 * `createApp` builds the app without listening, so it can be mounted under any path of another app.
 */
import { ZERO_CACHE_STATS, type QueryService } from '@sqlgate/core';
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import pino, { type Logger } from 'pino';
import { httpStatusFor, RETRY_AFTER_SECONDS } from './http-status';
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
  if (status === 503) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  res.status(status).json(body);
}

function serverTiming(poolWaitMs: number, executionMs: number, serialisationMs: number): string {
  const format = (value: number): string => value.toFixed(3);
  return `pool;dur=${format(poolWaitMs)}, exec;dur=${format(executionMs)}, ser;dur=${format(serialisationMs)}`;
}

/** Aborts when the client goes away before the response was sent. */
function abortOnDisconnect(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
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

export function createApp(options: AppOptions): express.Express {
  const { service } = options;
  const logger = options.logger ?? pino({ level: 'silent' });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestLog(logger));
  app.use(express.json({ limit: options.maxBodyBytes ?? 1024 * 1024, type: () => true }));
  if (options.statsToken) app.use('/api/stats', requireStatsToken(options.statsToken));

  app.post('/api/query', async (req: Request, res: Response) => {
    if (logger.isLevelEnabled('debug')) {
      // SQL text only at debug, and never the rest of the body: it carries the password.
      logger.debug({ reqId: res.locals.requestId, sql: (req.body as { sql?: unknown } | undefined)?.sql }, 'query');
    }
    const { body, failure, timings } = await service.execute(req.body, { signal: abortOnDisconnect(res) });
    const started = performance.now();
    const json = JSON.stringify(body);
    const status = httpStatusFor(failure);
    res.setHeader('Server-Timing', serverTiming(timings.poolWaitMs, timings.executionMs, performance.now() - started));
    if (status === 503) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    // Written as a string with its length: Node sends headers and body in one write.
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
    res.end(json);
  });

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
      sendJson(res, 500, { error: 'Failed to retrieve cache statistics', stats: { ...ZERO_CACHE_STATS }, entries: [] });
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
  const type = (error as { type?: unknown }).type;
  if (type === 'entity.too.large') {
    sendJson(res, 413, { error: 'Request body too large' });
  } else if (type === 'entity.parse.failed') {
    sendJson(res, 400, { error: 'Request body is not valid JSON' });
  } else if (typeof (error as { status?: unknown }).status === 'number' && (error as { status: number }).status < 500) {
    sendJson(res, (error as { status: number }).status, { error: (error as Error).message });
  } else {
    sendJson(res, 500, { error: 'Internal server error' });
  }
};
