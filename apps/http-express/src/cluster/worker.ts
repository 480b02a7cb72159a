/**
 * A worker of the standalone server (docs/decisions.md 10.28): the same server as a single process,
 * with a result cache kept coherent through the primary, counters summed by the primary, the
 * pool statistics and metrics of every worker together, and the sessions and cancels of every
 * worker reachable from each (10.35).
 */
import { MemoryCacheStore } from '@sqlgate/core';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config';
import { connectionTargetsOf } from '../access/access-from-config';
import { createObservability } from '../observability';
import {
  createServiceFromConfig,
  lateReplicaEvents,
  startServer,
  type RunningServer,
} from '../server';
import { ClusterCounters } from './cluster-counters';
import { CoherentMemoryStore } from './coherent-memory-store';
import { IpcChannel } from './ipc-channel';
import { PRIMARY_NOTICES, PRIMARY_REQUESTS, WORKER_REQUESTS, type MetricJson } from './protocol';
import {
  sessionRequestTimeoutMs,
  STATISTICS_TIMEOUT_MS,
  type ChannelToPrimary,
} from './worker-channel';
import { WorkerRouting } from './worker-routing';

/** How long the primary has to take a new worker in. */
const JOIN_TIMEOUT_MS = 10_000;

export async function runWorker(config: ServerConfig, logger: Logger): Promise<RunningServer> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('a worker needs an IPC channel to its primary');
  // The handlers below use what is built after the channel; the primary sends a worker nothing
  // before it has joined, and it joins only once all of it is built.
  const channel: ChannelToPrimary = new IpcChannel({
    send: (message, done) => send(message, undefined, undefined, done),
    outgoing: WORKER_REQUESTS,
    incoming: PRIMARY_REQUESTS,
    incomingNotices: PRIMARY_NOTICES,
    handlers: {
      applyInvalidation: async ({ where, relations }) => {
        await store.applyInvalidation(where, relations);
        return {};
      },
      clearLocalCache: async () => {
        await store.forgetAll();
        return {};
      },
      localCacheSize: async () => ({ entries: await store.localSize() }),
      localRecentEntries: async ({ limit }) => ({ entries: await store.localRecent(limit) }),
      localPoolStats: () => ({ pools: service.poolStats() }),
      localMetrics: async () => ({
        metrics: observability.metrics
          ? // prom-client's own type; the primary checks each metric against MetricJson.
            ((await observability.metrics.registry.getMetricsAsJSON()) as unknown as MetricJson[])
          : [],
      }),
      holdsSession: (payload) => routing.handlers().holdsSession(payload),
      runSessionRequest: (payload) => routing.handlers().runSessionRequest(payload),
      cancelLocal: (payload) => routing.handlers().cancelLocal(payload),
    },
    noticeHandlers: {
      callerGone: (payload) => routing.noticeHandlers().callerGone(payload),
    },
    onMalformed: (reason) => logger.warn({ reason }, 'malformed message from the primary'),
  });
  process.on('message', (message: unknown) => channel.receive(message));
  // node:cluster ends a worker whose primary went away; nothing more can be asked meanwhile.
  process.once('disconnect', () => channel.close('the primary is gone'));

  const store = new CoherentMemoryStore(
    new MemoryCacheStore({
      maxEntries: config.queryCacheMaxEntries,
      maxBytes: config.queryCacheMaxBytes,
    }),
    channel,
    (what, error) =>
      logger.error(
        { err: error },
        `the primary did not confirm a cache ${what}: other workers may serve entries it covers until they expire`,
      ),
  );
  // With Redis (QUERY_CACHE_REDIS_URL) every worker shares it directly, as separate instances do,
  // and this worker's own store stays empty: what the primary asks of it is then a no-op.
  const replicaEvents = lateReplicaEvents(logger);
  const service = createServiceFromConfig(
    config,
    logger,
    config.queryCacheRedisUrl ? {} : { cacheStore: store, counters: new ClusterCounters(channel) },
    replicaEvents.events,
  );
  const observability = createObservability(service, logger, config);
  replicaEvents.reach(observability.metrics);
  const routing = new WorkerRouting({
    primary: channel,
    service,
    logger,
    observability: observability.watcher,
    sessionRequestTimeoutMs: sessionRequestTimeoutMs(config.sessionMaxLifetimeMs),
    ...(config.access
      ? { cancelTargets: { connections: connectionTargetsOf(config.access) } }
      : {}),
  });

  await channel.request('join', {}, JOIN_TIMEOUT_MS);
  const server = await startServer({
    ...config,
    logger,
    service,
    observability,
    clusterStatistics: {
      poolStats: async () => (await channel.request('poolStats', {}, STATISTICS_TIMEOUT_MS)).pools,
      metrics: async () => (await channel.request('metrics', {}, STATISTICS_TIMEOUT_MS)).exposition,
    },
    cancelDesk: routing,
    sessionsElsewhere: routing,
  });
  logger.info({ url: server.url }, 'worker listening');
  channel.notify('listening', { url: server.url });
  return server;
}
