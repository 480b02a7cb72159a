/**
 * The access a server runs with (docs/decisions.md 12): CONFIG_FILE's connections, keys and JWT
 * rules, limits kept in the shared Redis when there is one (QUERY_CACHE_REDIS_URL) or in this
 * process's memory; without CONFIG_FILE, the SPEC form only.
 */
import { createMemoryLimitStore, type ConnectionTarget, type LimitStore } from '@sqlgate/core';
import { connectRedisLimitStore } from '@sqlgate/redis-cache';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config';
import type { ConfiguredTargets } from '../contract';
import type { ServiceMetrics } from '../observability';
import { createAccess, directAccess, type Access } from './admission';
import type { AccessConfig } from './config-file';
import { createAuthenticator } from './credentials';

export interface ServerAccess {
  access: Access;
  /** Ends the limits' Redis connection, if there is one. */
  close(): Promise<void>;
}

export function accessFromConfig(
  config: ServerConfig,
  defaultTargets: ConfiguredTargets | undefined,
  logger: Logger,
  metrics: ServiceMetrics | undefined,
): ServerAccess {
  const accessConfig = config.access;
  if (accessConfig === undefined) {
    return { access: directAccess(defaultTargets), close: () => Promise.resolve() };
  }
  if (config.statsToken === undefined) {
    logger.warn(
      'CONFIG_FILE without STATS_TOKEN: anyone may read the statistics and clear the result cache of every caller',
    );
  }
  const limits = limitStoreOf(config, logger);
  const access = createAccess({
    connectionTargets: connectionTargetsOf(accessConfig),
    allowDirect: config.allowDirectConnections,
    defaultTargets,
    authenticate: createAuthenticator(accessConfig),
    limits,
    // The key's id or the token's subject only: never a secret, a token or a claim beyond it.
    refused: (reason, callerId, reqId) => {
      metrics?.accessRefused(reason);
      logger.warn({ reqId, reason, callerId }, 'access refused');
    },
  });
  return { access, close: () => limits.close?.() ?? Promise.resolve() };
}

/** Each connection's target carries its name: its pool, stats and logs show that name. */
export function connectionTargetsOf(config: AccessConfig): ReadonlyMap<string, ConnectionTarget> {
  return new Map(
    [...config.connections].map(([name, connection]) => [name, { ...connection.target, name }]),
  );
}

function limitStoreOf(config: ServerConfig, logger: Logger): LimitStore {
  if (config.queryCacheRedisUrl === undefined) return createMemoryLimitStore();
  return connectRedisLimitStore({
    url: config.queryCacheRedisUrl,
    prefix: config.queryCacheRedisPrefix,
    timeoutMs: config.queryCacheRedisTimeoutMs,
    onDegraded: (reason) => logger.warn({ reason }, 'limits decided by this instance alone'),
  });
}
