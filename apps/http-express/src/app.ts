/**
 * The Express adapter: HTTP in, a use case of the query service, status and JSON out. Nothing else.
 * `createApp` builds the app without listening, so it can be mounted under any path of another app.
 */
import {
  RequestError,
  serializeResponse,
  ZERO_CACHE_STATS,
  type PoolStat,
  type QueryService,
} from '@sqlgate/core';
import {
  allowedMethodsByPath,
  expressPathOf,
  readConnectionCheckBody,
  requestOrRefusal,
  ROUTES,
  routePathOf,
  type ConfiguredTargets,
} from './contract';
import express, {
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import pino, { type Logger } from 'pino';
import { closeWhenAnsweredEarly } from './answer-headers';
import { directAccess, type Access } from './access/admission';
import { createBrowserGuard } from './browser-guard';
import { consoleRouter } from './console-route';
import { httpStatusFor } from './http-status';
import { answerBodyError, BodyError, DEFAULT_BODY_TIMEOUT_MS } from './json-body';
import { answerHostParserErrorsWhenMounted, jsonBody, mountOrderWarner } from './mounted-body';
import { answerQuery, writeInternalError, writeJson } from './query-endpoint';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi';
import { answerCancel, localCancelDesk, type CancelDesk } from './cancel-endpoint';
import { answerCopy } from './copy-endpoint';
import { answerNeonQuery } from './neon-endpoint';
import { sessionHandlers, type SessionsElsewhere } from './session-endpoints';
import { requestLog } from './request-log';
import { answerUnroutableTargets } from './request-target';
import { DEFAULT_ANSWER_STALL_TIMEOUT_MS } from './answer-stall';
import { requireStatsToken } from './stats-token';
import { createObservability, DEFAULT_OBSERVABILITY, type AppObservability } from './observability';

/**
 * The statistics of every process serving together (WORKERS, docs/decisions.md 10.28), answered
 * instead of this process's own by GET /api/stats/pools and GET /metrics.
 */
export interface ClusterStatistics {
  /** Every process's pools, merged by pool id. */
  poolStats(): Promise<PoolStat[]>;
  /** The Prometheus exposition of every process's metrics, aggregated. */
  metrics(): Promise<string>;
}

export interface AppOptions {
  service: QueryService;
  /** Largest accepted request body in bytes (MAX_BODY_BYTES). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Where request lines go. Default: nowhere (an embedded app logs through its host). */
  logger?: Logger;
  /** When set, the statistics endpoints require `Authorization: Bearer <statsToken>` (STATS_TOKEN). */
  statsToken?: string;
  /** Time a request body may take to arrive (BODY_TIMEOUT_MS); past it, 408. Default 10 s. */
  bodyTimeoutMs?: number;
  /**
   * Time a client may take none of an answer before it is given up (ANSWER_STALL_TIMEOUT_MS).
   * Default 60 s.
   */
  answerStallTimeoutMs?: number;
  /** Origins whose pages may call sqlgate, with CORS headers (CORS_ORIGINS). Default: none. */
  corsOrigins?: readonly string[];
  /** Host names accepted besides loopback names when the server listens on loopback (ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Bytes of data one POST /api/copy may upload (MAX_COPY_BYTES). Default 10 GiB. */
  maxCopyBytes?: number;
  /**
   * Metrics, spans and the slow-query log (docs/decisions.md 10.25). Default: metrics on, spans on
   * (no-ops without a host SDK), statements slower than 1 s logged. `createObservability` builds
   * one to share with a server's direct query path.
   */
  observability?: AppObservability;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>` (METRICS_TOKEN). */
  metricsToken?: string;
  /** Statistics of several processes to answer instead of this one's. Default: this one's. */
  clusterStatistics?: ClusterStatistics;
  /**
   * Serve the browser console at the app's root (docs/decisions.md 10.31). Default: off, so an app
   * mounted into another serves only the API unless asked; the standalone server turns it on
   * (CONSOLE).
   */
  console?: boolean;
  /**
   * Proxies whose X-Forwarded-For tells the client's address (TRUST_PROXY): addresses, CIDR
   * ranges, or `loopback`, `linklocal`, `uniquelocal`, as Express's `trust proxy` takes them.
   * Default: the host app's setting when mounted, else none (docs/decisions.md 10.34).
   */
  trustProxy?: readonly string[];
  /** Where cancels by request id are tried (every worker of WORKERS=n). Default: this process. */
  cancelDesk?: CancelDesk;
  /** The processes holding sessions this one does not (the other workers of WORKERS=n). */
  sessionsElsewhere?: SessionsElsewhere;
  /**
   * Targets a request may use without naming one (docs/decisions.md 10.48); the console's form
   * opens on the default one.
   */
  configuredTargets?: ConfiguredTargets;
  /**
   * Who may run what: API keys, tokens and named connections (CONFIG_FILE, docs/decisions.md 12).
   * Default: requests name their own targets (or use the default one), as SPEC says.
   */
  access?: Access;
}

/** Sends a JSON body with its status; a 503 also says when to come back. */
function sendJson(res: Response, status: number, body: unknown): void {
  writeJson(res, status, serializeResponse(body));
}

/** Routes and the methods they answer, for 404 and 405 with Allow: the contract's route table. */
const ALLOWED_METHODS = allowedMethodsByPath();

/**
 * A path's route for metrics and spans: a route of the table (`/api/sessions/{sessionId}`, never
 * the id itself), or `unmatched` (bounded labels).
 */
function routeOf(path: string): string {
  return routePathOf(path) ?? 'unmatched';
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_COPY_BYTES = 10 * 1024 ** 3;

export function createApp(options: AppOptions): express.Express {
  const logger = options.logger ?? pino({ level: 'silent' });
  const observability =
    options.observability ?? createObservability(options.service, logger, DEFAULT_OBSERVABILITY);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (options.trustProxy) app.set('trust proxy', options.trustProxy);
  // First of all: `*` and other targets no route can match (request-target.ts).
  app.use(answerUnroutableTargets(logger, observability.watcher));
  useRequestSteps(app, options, logger, observability);
  // A host's body parser before sqlgate is said once (docs/decisions.md 10.39).
  const warnMountOrder = mountOrderWarner(options.logger);
  answerHostParserErrorsWhenMounted(app, warnMountOrder);
  const body = jsonBody(
    {
      maxBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      timeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    },
    warnMountOrder,
  );
  routeOperations(app, operationHandlers(options, logger, observability), body);
  app.use(answerUnknownRoute);
  app.use(jsonErrors(logger));
  return app;
}

/**
 * What every request of the app goes through before its route: its id and log line, its metrics
 * and span, the browser guard, then the console and the tokens.
 */
function useRequestSteps(
  app: express.Express,
  options: AppOptions,
  logger: Logger,
  observability: AppObservability,
): void {
  app.use(requestLog(logger));
  app.use((req, res, next) => {
    observability.watcher.begin(req, res, routeOf(req.path));
    next();
  });
  const admit = createBrowserGuard({
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
  });
  app.use((req, res, next) => {
    if (admit(req, res)) next();
  });
  if (options.console) {
    // The names of CONFIG_FILE's connections, for the console's key login; never their targets.
    const names = [...(options.access?.targets?.connections?.keys() ?? [])];
    app.use(consoleRouter(options.configuredTargets?.default, names));
  }
  if (options.statsToken) app.use('/api/stats', requireStatsToken(options.statsToken));
  // With metrics off there is nothing to protect: /metrics answers 404 to everyone.
  if (options.metricsToken && observability.metrics) {
    app.use('/metrics', requireStatsToken(options.metricsToken, 'sqlgate metrics'));
  }
}

/**
 * One handler per operation of the contract's route table (contract/routes.ts); the table decides
 * methods and paths.
 */
function operationHandlers(
  options: AppOptions,
  logger: Logger,
  observability: AppObservability,
): Record<string, RequestHandler> {
  const { service, configuredTargets } = options;
  const access = options.access ?? directAccess(configuredTargets);
  const answerStallMs = options.answerStallTimeoutMs ?? DEFAULT_ANSWER_STALL_TIMEOUT_MS;
  const cancelDesk = options.cancelDesk ?? localCancelDesk(service, access.targets);
  const copyLimits = {
    maxCopyBytes: options.maxCopyBytes ?? DEFAULT_MAX_COPY_BYTES,
    idleTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
  };
  const neonLimits = {
    maxBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    timeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    answerStallMs,
  };
  return {
    executeQuery: (req, res) =>
      answerQuery(service, logger, { body: req.body, access }, req, res, answerStallMs),
    neonQuery: (req, res) => answerNeonQuery(service, logger, neonLimits, access, req, res),
    ...sessionHandlers(service, logger, answerStallMs, {
      elsewhere: options.sessionsElsewhere,
      access,
    }),
    cancelRequest: (req, res) => answerCancel(cancelDesk, logger, req, res, access),
    copyFrom: (req, res) => answerCopy(service, logger, copyLimits, req, res, access),
    testConnection: async (req, res) => {
      const admission = await access.admit(req, res, req.body);
      const result = await service.checkConnection(
        admission instanceof RequestError
          ? admission
          : requestOrRefusal(() => readConnectionCheckBody(admission.body, admission.targets)),
      );
      sendJson(res, 'failure' in result ? httpStatusFor(result.failure) : 200, result.body);
    },
    ...statisticsHandlers(service, options.clusterStatistics),
    ...serviceHandlers(service, observability, options.clusterStatistics),
  };
}

/** The statistics endpoints, and clearing the cache. */
function statisticsHandlers(
  service: QueryService,
  clusterStatistics: ClusterStatistics | undefined,
): Record<string, RequestHandler> {
  return {
    // A single process answers at once, as it always did; workers ask their primary.
    getPoolStatistics: clusterStatistics
      ? async (_req, res) => {
          try {
            sendJson(res, 200, { stats: await clusterStatistics.poolStats() });
          } catch {
            sendJson(res, 500, { error: 'Failed to retrieve pool statistics', stats: [] });
          }
        }
      : (_req, res) => {
          try {
            sendJson(res, 200, { stats: service.poolStats() });
          } catch {
            sendJson(res, 500, { error: 'Failed to retrieve pool statistics', stats: [] });
          }
        },
    getCacheStatistics: async (_req, res) => {
      try {
        sendJson(res, 200, await service.cacheStatistics());
      } catch {
        sendJson(res, 500, {
          error: 'Failed to retrieve cache statistics',
          stats: { ...ZERO_CACHE_STATS },
          entries: [],
        });
      }
    },
    clearCache: async (_req, res) => {
      try {
        await service.clearCache();
        sendJson(res, 200, { success: true, message: 'Cache cleared successfully' });
      } catch {
        sendJson(res, 500, { error: 'Failed to clear cache' });
      }
    },
  };
}

/** What the service says of itself: its OpenAPI document, its health and its metrics. */
function serviceHandlers(
  service: QueryService,
  observability: AppObservability,
  clusterStatistics: ClusterStatistics | undefined,
): Record<string, RequestHandler> {
  // An app mounted at /db serves a document whose `servers` entry says /db. One document is kept:
  // a mount path with parameters must not grow a cache per value.
  let served: { mountPath: string; document: OpenApiDocument } | undefined;
  return {
    getOpenApiDocument: (req, res) => {
      if (served?.mountPath !== req.baseUrl) {
        served = { mountPath: req.baseUrl, document: buildOpenApiDocument(req.baseUrl) };
      }
      sendJson(res, 200, served.document);
    },
    // 200 even when degraded: an instance whose cache is down still serves every request
    // (docs/decisions.md 10.40).
    getHealth: async (_req, res) => {
      const cache = await service.cacheHealth();
      sendJson(
        res,
        200,
        cache.available ? { status: 'ok' } : { status: 'degraded', cache: 'unavailable' },
      );
    },
    getMetrics: async (req, res) => {
      const { metrics } = observability;
      if (!metrics) {
        sendJson(res, 404, { error: `Not found: ${req.method} ${req.path}` });
        return;
      }
      const exposition = clusterStatistics
        ? await clusterStatistics.metrics()
        : await metrics.registry.metrics();
      closeWhenAnsweredEarly(res);
      res.status(200).type(metrics.registry.contentType).send(exposition);
    },
  };
}

/**
 * Routes every operation of the table to its handler. A route of the table without a handler (or
 * the reverse) is a defect of this file.
 */
function routeOperations(
  app: express.Express,
  handlers: Record<string, RequestHandler>,
  body: RequestHandler,
): void {
  for (const route of ROUTES) {
    const handler = handlers[route.operationId];
    if (!handler) throw new Error(`No handler for the route ${route.operationId}`);
    // Routes with a JSON request body read it first; a multipart upload is read as it streams.
    const chain =
      route.request?.mediaType === undefined && route.request ? [body, handler] : [handler];
    app[route.method](expressPathOf(route.path), ...chain);
  }
  const unrouted = Object.keys(handlers).filter(
    (operationId) => !ROUTES.some((route) => route.operationId === operationId),
  );
  if (unrouted.length > 0) throw new Error(`Handlers without a route: ${unrouted.join(', ')}`);
}

/** A path of the table with another method: 405 with Allow; any other path: 404. */
function answerUnknownRoute(req: Request, res: Response): void {
  const route = routePathOf(req.path);
  const allowed = route === undefined ? undefined : ALLOWED_METHODS.get(route);
  if (allowed) {
    res.setHeader('Allow', allowed.join(', '));
    sendJson(res, 405, { error: `Method ${req.method} not allowed on ${req.path}` });
    return;
  }
  sendJson(res, 404, { error: `Not found: ${req.method} ${req.path}` });
}

/** Every error is JSON: never Express's HTML page, never a stack trace. */
const jsonErrors =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (error instanceof BodyError) {
      answerBodyError(res, error);
    } else if (
      typeof (error as { status?: unknown }).status === 'number' &&
      (error as { status: number }).status < 500
    ) {
      sendJson(res, (error as { status: number }).status, { error: (error as Error).message });
    } else {
      writeInternalError(res, logger, error);
    }
  };
