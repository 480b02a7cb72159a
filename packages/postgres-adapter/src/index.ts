/**
 * @sqlgate/postgres-adapter: sqlgate's connection port implemented with pg.
 */
import type {
  AcquireOptions,
  Connection,
  ConnectionProvider,
  ConnectionTarget,
} from '@sqlgate/core';
import { checkConnection } from './connection-check';
import { PoolRegistry, type PoolLimits } from './pool-registry';

export interface PostgresConnectionsOptions extends Partial<PoolLimits> {
  /** PEM of the CA bundle for sslMode `verify-full` (the contents of SSL_ROOT_CERT). */
  rootCertificate?: string;
  /** Receives notes about connections that failed outside any request (dropped idle clients). */
  log?: (message: string, error?: unknown) => void;
}

export const DEFAULT_POOL_LIMITS: PoolLimits = {
  max: 10,
  idleTimeoutMs: 30_000,
  connectTimeoutMs: 5_000,
  waitTimeoutMs: 10_000,
  maxPools: 100,
  unusedPoolTtlMs: 5 * 60_000,
};

export interface PostgresConnections extends ConnectionProvider {
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Pools per target and credentials, with per-pool type parsers; never touches pg's global state.
 *
 * @example
 * const connections = createPostgresConnections({ max: 10 });
 * const service = createQueryService({ connections });
 */
export function createPostgresConnections(
  options: PostgresConnectionsOptions = {},
): PostgresConnections {
  const { rootCertificate, log, ...limits } = options;
  const tls = rootCertificate ? { rootCertificate } : {};
  const registry = new PoolRegistry({ ...DEFAULT_POOL_LIMITS, ...definedOnly(limits) }, tls, log);
  const connectTimeoutMs = limits.connectTimeoutMs ?? DEFAULT_POOL_LIMITS.connectTimeoutMs;
  const close = (): Promise<void> => registry.close();
  return {
    acquire: (target: ConnectionTarget, acquireOptions?: AcquireOptions): Promise<Connection> =>
      registry.acquire(target, acquireOptions),
    check: (target) => checkConnection(target, connectTimeoutMs, tls),
    poolStats: () => registry.stats(),
    scopeOf: (target) => registry.keyOf(target),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

export type { PoolLimits } from './pool-registry';
