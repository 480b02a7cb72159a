/**
 * @sqlgate/postgres-adapter: sqlgate's connection port implemented with pg.
 */
import {
  settle,
  type AcquireOptions,
  type Connection,
  type ConnectionProvider,
  type ConnectionTarget,
  type Settled,
} from '@sqlgate/core';
import { CacheScopes, type ResolveFirst } from './cache-scope';
import { checkConnection } from './connection-check';
import { PoolRegistry, type PoolLimits } from './pool-registry';

export interface PostgresConnectionsOptions extends Partial<PoolLimits> {
  /** PEM of the CA bundle for sslMode `verify-full` (the contents of SSL_ROOT_CERT). */
  rootCertificate?: string;
  /** Receives notes about connections that failed outside any request (dropped idle clients). */
  log?: (message: string, error?: unknown) => void;
  /**
   * json and jsonb values (and a float `-0`) as `RawJson`, PostgreSQL's own text (docs/decisions.md
   * 10.13). Default false: parsed, losing big numbers, trailing zeros and duplicate keys.
   */
  rawJson?: boolean;
  /** Resolves a host to the endpoint the result cache keys entries by; default: the system's. */
  resolveHost?: ResolveFirst;
  /**
   * The HMAC key cache scopes name passwords under: the same for instances sharing a cache; random
   * per process when absent (docs/decisions.md 10.27).
   */
  credentialKey?: Uint8Array | string;
  /**
   * Reads are kept as named prepared statements per connection (at most 100), so a text sent again
   * is not planned again (docs/decisions.md 10.30). Default true; safe behind any pooler.
   */
  preparedStatements?: boolean;
}

export const DEFAULT_POOL_LIMITS: PoolLimits = {
  max: 10,
  idleTimeoutMs: 30_000,
  maxLifetimeMs: 30 * 60_000,
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
  const {
    rootCertificate,
    log,
    rawJson = false,
    resolveHost,
    credentialKey,
    preparedStatements = true,
    ...limits
  } = options;
  const tls = rootCertificate ? { rootCertificate } : {};
  const registry = new PoolRegistry({ ...DEFAULT_POOL_LIMITS, ...definedOnly(limits) }, tls, log, {
    preparedStatements,
    rawJson,
  });
  const scopes = new CacheScopes({
    identify: (target) => registry.serverIdentity(target),
    ...(resolveHost ? { resolve: resolveHost } : {}),
    ...(credentialKey !== undefined ? { credentialKey } : {}),
  });
  const connectTimeoutMs = limits.connectTimeoutMs ?? DEFAULT_POOL_LIMITS.connectTimeoutMs;
  const close = (): Promise<void> => registry.close();
  return {
    // The pools and checks throw sqlgate's errors inside this package; here, at the port, they
    // become values (docs/decisions.md 10.21).
    acquire: (
      target: ConnectionTarget,
      acquireOptions?: AcquireOptions,
    ): Promise<Settled<Connection>> => settle(() => registry.acquire(target, acquireOptions)),
    check: (target) => settle(() => checkConnection(target, connectTimeoutMs, tls)),
    poolStats: () => registry.stats(),
    scopeOf: (target) => settle(() => scopes.scopeOf(target)),
    serverSettings: (target) => {
      const standardConformingStrings = registry.standardConformingStrings(target);
      return standardConformingStrings === undefined ? undefined : { standardConformingStrings };
    },
    spareConnections: (target) => registry.spareConnections(target),
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
export type { ResolveFirst } from './cache-scope';
