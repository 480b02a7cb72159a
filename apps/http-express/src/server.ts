/**
 * Wiring and lifecycle: the composition root that plugs the pg adapter into the core, and a server
 * that closes everything it opened.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createQueryService,
  MemoryCacheStore,
  type QueryService,
  type QueryServiceOptions,
} from '@sqlgate/core';
import { createPostgresConnections } from '@sqlgate/postgres-adapter';
import { createRedisCache } from '@sqlgate/redis-cache';
import pino, { type Logger } from 'pino';
import { createAllowedTargets } from './allowed-targets';
import { reportCacheAtStart } from './cache-start-check';
import { answerClientErrorsInJson } from './client-errors';
import { createApp, type ClusterStatistics } from './app';
import type { CancelDesk } from './cancel-endpoint';
import type { SessionsElsewhere } from './session-endpoints';
import { withDirectQueryPath } from './direct-query-path';
import { accessFromConfig } from './access/access-from-config';
import {
  DEFAULT_REPLICA_CHECK_INTERVAL_MS,
  replicaRoutingOf,
  type ReplicaEvents,
} from './replicas/replica-routing';
import { inConnectionOrder } from './pipelined-requests';
import { replicaStateLog } from './replicas/replica-log';
import { withUnroutableTargetsAnswered } from './request-target';
import type { ConfiguredTargets } from './contract';
import {
  cacheSecretOf,
  ConfigError,
  environmentWithout,
  loadConfig,
  type ServerConfig,
} from './config';
import { createObservability, type AppObservability, type ServiceMetrics } from './observability';
import { InFlightRequests, shutDown } from './graceful-shutdown';

export interface StartServerOptions extends Partial<ServerConfig> {
  /** Use this service instead of building one from the configuration. */
  service?: QueryService;
  /** Where request lines and warnings go. Default: a pino logger at `logLevel` on stdout. */
  logger?: Logger;
  /** Use these metrics and spans instead of building them (they must observe `service`). */
  observability?: AppObservability;
  /** Answer the statistics of every process serving together (a worker of WORKERS=n). */
  clusterStatistics?: ClusterStatistics;
  /** Try cancels by request id in every process serving together (a worker of WORKERS=n). */
  cancelDesk?: CancelDesk;
  /** Run session requests in the process holding the session (a worker of WORKERS=n). */
  sessionsElsewhere?: SessionsElsewhere;
  /** Targets a request may use without naming one (docs/decisions.md 10.48). */
  configuredTargets?: ConfiguredTargets;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish, ends every pool. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The query service of a configuration: the composition root. `shared` replaces the process's own
 * result cache and counters with ones it shares with others (a worker of WORKERS=n).
 */
export function createServiceFromConfig(
  config: ServerConfig,
  logger?: Logger,
  shared: Pick<QueryServiceOptions, 'cacheStore' | 'counters'> = {},
  replicaEvents?: ReplicaEvents,
): QueryService {
  const connections = createPostgresConnections({
    // Connections that fail outside any request (an idle one dropped by the server) are only noted.
    ...(logger
      ? { log: (message: string, error?: unknown) => logger.warn({ err: error }, message) }
      : {}),
    max: config.poolMax,
    idleTimeoutMs: config.poolIdleTimeoutMs,
    maxLifetimeMs: config.poolMaxLifetimeMs,
    connectTimeoutMs: config.connectTimeoutMs,
    waitTimeoutMs: config.poolWaitTimeoutMs,
    maxPools: config.poolTargetsMax,
    ...(config.sslRootCertificate ? { rootCertificate: config.sslRootCertificate } : {}),
    // json values reach HTTP callers as PostgreSQL's own text (docs/decisions.md 10.13).
    rawJson: true,
    preparedStatements: config.preparedStatements,
    ...(config.queryCacheSecret ? { credentialKey: config.queryCacheSecret } : {}),
  });
  // docs/decisions.md 13: reads of connections with replicas go to them.
  const readRouting = replicaRoutingOf(config.access, connections, {
    checkIntervalMs: DEFAULT_REPLICA_CHECK_INTERVAL_MS,
    consistencyWaitMs: config.consistencyWaitMs,
    ...(replicaEvents ? { events: replicaEvents } : {}),
  });
  return createQueryService({
    connections,
    ...(readRouting ? { readRouting } : {}),
    ...(config.allowedTargets ? { targetPolicy: createAllowedTargets(config.allowedTargets) } : {}),
    defaultMaxRows: config.maxRows,
    maxResultBytes: config.maxResultBytes,
    maxResultBytesTotal: config.maxResultBytesTotal,
    maxStatements: config.maxStatements,
    alwaysResetSession: config.sessionReset === 'always',
    cacheMaxEntryBytes: config.queryCacheMaxBytes,
    ...resultCacheOf(config, shared),
    cacheTtlMs: config.queryCacheTtlMs,
    cacheByDefault: config.queryCacheDefault,
    sessions: {
      maxSessions: config.maxSessions,
      // One connection of every pool stays for requests outside sessions.
      maxPerPool: config.poolMax - 1,
      idleTimeoutMs: config.sessionIdleTimeoutMs,
      maxLifetimeMs: config.sessionMaxLifetimeMs,
    },
    ...(logger
      ? { warn: (message: string, details: object) => logger.warn(details, message) }
      : {}),
  });
}

/**
 * Where cached results and the statistics' counters live: a Redis shared by every instance
 * (QUERY_CACHE_REDIS_URL, docs/decisions.md 10.27), or this process's memory.
 */
function resultCacheOf(
  config: ServerConfig,
  shared: Pick<QueryServiceOptions, 'cacheStore' | 'counters'>,
): Pick<QueryServiceOptions, 'cacheStore' | 'counters' | 'cacheMaxEntryBytes'> {
  if (config.queryCacheRedisUrl) {
    // Without one shared key, each instance would name callers' credentials its own way, and no
    // instance would ever serve another's entries.
    if (config.queryCacheSecret === undefined) {
      throw new ConfigError(
        'QUERY_CACHE_REDIS_URL needs QUERY_CACHE_SECRET: the same secret of at least 32 characters on every instance sharing the Redis',
      );
    }
    cacheSecretOf(config.queryCacheSecret);
    const redis = createRedisCache({
      url: config.queryCacheRedisUrl,
      prefix: config.queryCacheRedisPrefix,
      commandTimeoutMs: config.queryCacheRedisTimeoutMs,
      invalidationTimeoutMs: config.queryCacheRedisInvalidateTimeoutMs,
      maxEntryBytes: config.queryCacheRedisMaxEntryBytes,
    });
    return {
      cacheStore: redis.store,
      counters: redis.counters,
      // Refused before it is encoded and sent: answered `oversize`, not `unavailable`.
      cacheMaxEntryBytes: Math.min(config.queryCacheMaxBytes, config.queryCacheRedisMaxEntryBytes),
    };
  }
  // A worker of WORKERS=n without Redis: its own memory, kept coherent with the other workers'.
  if (shared.cacheStore) return shared;
  return {
    cacheStore: new MemoryCacheStore({
      maxEntries: config.queryCacheMaxEntries,
      maxBytes: config.queryCacheMaxBytes,
    }),
  };
}

/**
 * Starts sqlgate. Options override the environment's configuration; `port: 0` picks a free port.
 *
 * @example
 * await using server = await startServer({ port: 0 });
 * await fetch(`${server.url}/api/query`, { method: 'POST', body: JSON.stringify({ ... }) });
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const {
    service: givenService,
    logger: givenLogger,
    observability: givenObservability,
    clusterStatistics,
    cancelDesk,
    sessionsElsewhere,
    configuredTargets,
    ...overrides
  } = options;
  const given = definedOnly(overrides);
  const config: ServerConfig = { ...loadConfig(environmentWithout(process.env, given)), ...given };
  const logger = givenLogger ?? pino({ level: config.logLevel });
  const replicaEvents = lateReplicaEvents(logger);
  const service = givenService ?? createServiceFromConfig(config, logger, {}, replicaEvents.events);
  const browsers = {
    ...(config.corsOrigins ? { corsOrigins: config.corsOrigins } : {}),
    ...(config.allowedHosts ? { allowedHosts: config.allowedHosts } : {}),
  };
  const observability = givenObservability ?? createObservability(service, logger, config);
  replicaEvents.reach(observability.metrics);
  const { access, close: closeAccess } = accessFromConfig(
    config,
    configuredTargets,
    logger,
    observability.metrics,
  );
  const app = createApp({
    access,
    service,
    observability,
    ...(clusterStatistics ? { clusterStatistics } : {}),
    ...(cancelDesk ? { cancelDesk } : {}),
    ...(sessionsElsewhere ? { sessionsElsewhere } : {}),
    ...(config.metricsToken ? { metricsToken: config.metricsToken } : {}),
    maxBodyBytes: config.maxBodyBytes,
    maxCopyBytes: config.maxCopyBytes,
    bodyTimeoutMs: config.bodyTimeoutMs,
    answerStallTimeoutMs: config.answerStallTimeoutMs,
    logger,
    ...(config.statsToken ? { statsToken: config.statsToken } : {}),
    ...browsers,
    console: config.console,
    ...(config.trustProxy ? { trustProxy: config.trustProxy } : {}),
    ...(configuredTargets ? { configuredTargets } : {}),
  });
  const inFlight = new InFlightRequests();
  const server = createServer(
    // Node checks its header and request timeouts on this interval (30 s by default), so they
    // would otherwise fire up to 30 s late.
    // An HTTP/1.1 request without Host is answered in JSON by the browser guard, not by Node's
    // empty 400.
    { connectionsCheckingInterval: 1000, requireHostHeader: false },
    inConnectionOrder(
      inFlight.track(
        // Targets Express's router cannot read reach none of the app's middleware (request-target.ts).
        withDirectQueryPath(withUnroutableTargetsAnswered(app, logger, observability.watcher), {
          service,
          logger,
          observability: observability.watcher,
          bodyLimits: { maxBytes: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs },
          answerStallTimeoutMs: config.answerStallTimeoutMs,
          ...browsers,
          access,
        }),
      ),
    ),
  );
  inFlight.watch(server);
  // Slow clients cannot hold sockets for long, nor many of them (docs/decisions.md 9, 10.17):
  // past MAX_CONNECTIONS new sockets are closed at once; headers must arrive within 10 s; the
  // JSON body within BODY_TIMEOUT_MS (answered 408 by the body reader); an upload to
  // POST /api/copy may take as long as it keeps moving (no BODY_TIMEOUT_MS without data, 10.23),
  // so Node's own whole-request timeout, which cannot spare one route, is off.
  server.maxConnections = config.maxConnections;
  answerClientErrorsInJson(server, logger, observability.metrics);
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = 0;
  await listen(server, config.port, config.hostname);
  const { port } = server.address() as AddressInfo;
  const host =
    config.hostname === '0.0.0.0' || config.hostname === '::' ? '127.0.0.1' : config.hostname;
  const stopCacheReport = reportCacheAtStart(service, logger);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    stopCacheReport();
    return (closing ??= shutDown(server, service, inFlight).finally(closeAccess));
  };
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The replica routing's events, which reach the metrics once they exist: the service, which
 * routes, is made before the metrics that observe it.
 */
export function lateReplicaEvents(logger: Logger): {
  events: ReplicaEvents;
  reach(metrics: ServiceMetrics | undefined): void;
} {
  let metrics: ServiceMetrics | undefined;
  const logState = replicaStateLog(logger);
  return {
    events: {
      routed: (connection, servedBy) => metrics?.replicaRouted(connection, servedBy),
      lag: (connection, replica, lagMs) => {
        logState(connection, replica, lagMs);
        metrics?.replicaLag(connection, replica, lagMs);
      },
      consistencyWait: (connection, outcome) => metrics?.consistencyWait(connection, outcome),
    },
    reach: (observed) => (metrics = observed),
  };
}

function listen(server: Server, port: number, hostname: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

const HEADERS_TIMEOUT_MS = 10_000;

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
