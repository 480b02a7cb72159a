/**
 * Configuration, read from the environment and validated once at start-up. A bad value stops the
 * start with one line naming the variable and the expected form.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { readAccessConfig, type AccessConfig } from './access/config-file';
import { createAllowedTargets } from './allowed-targets';
import { DEFAULT_ANSWER_STALL_TIMEOUT_MS } from './answer-stall';
import { TIMER_MAX_MS } from './timer-limit';
import { commaList, normaliseHostName, normaliseOrigin } from './browser-guard';

export interface ServerConfig {
  port: number;
  hostname: string;
  poolMax: number;
  poolIdleTimeoutMs: number;
  /** A pooled connection is closed after this long, so a changed password or revoked login takes effect. */
  poolMaxLifetimeMs: number;
  connectTimeoutMs: number;
  poolWaitTimeoutMs: number;
  poolTargetsMax: number;
  maxRows: number;
  /** Bytes of rows one request may return (MAX_RESULT_BYTES), docs/decisions.md 10.2. */
  maxResultBytes: number;
  /** Bytes of rows all requests may hold at once (MAX_RESULT_BYTES_TOTAL), 10.2. */
  maxResultBytesTotal: number;
  maxStatements: number;
  maxBodyBytes: number;
  /** Bytes of data one POST /api/copy may upload (MAX_COPY_BYTES), docs/decisions.md 10.23. */
  maxCopyBytes: number;
  /** Time a request body may take to arrive (BODY_TIMEOUT_MS); past it, 408 and the socket closed. */
  bodyTimeoutMs: number;
  /**
   * Time a client may take none of an answer before it is given up (ANSWER_STALL_TIMEOUT_MS), for a
   * JSON answer and a stream without timeoutMs, docs/decisions.md 10.22.
   */
  answerStallTimeoutMs: number;
  /** Open HTTP sockets at most (MAX_CONNECTIONS); further ones are refused at once. */
  maxConnections: number;
  /** Origins whose pages may call sqlgate, answered with CORS headers (CORS_ORIGINS). */
  corsOrigins?: readonly string[];
  /** Host names accepted besides loopback names (ALLOWED_HOSTS); when set, checked on any address. */
  allowedHosts?: readonly string[];
  /**
   * Proxies whose X-Forwarded-For names the client (TRUST_PROXY), for the limit of failed cancels
   * per client, docs/decisions.md 10.34: addresses, CIDR ranges, `loopback`, `linklocal`,
   * `uniquelocal`.
   */
  trustProxy?: readonly string[];
  sessionReset: 'auto' | 'always';
  /** Repeated reads kept as named prepared statements per connection (PREPARED_STATEMENTS), 10.30. */
  preparedStatements: boolean;
  /** The browser console at `/` (CONSOLE), docs/decisions.md 10.31. */
  console: boolean;
  /** Sessions open at once (MAX_SESSIONS), docs/decisions.md 10.26. */
  maxSessions: number;
  /** A session ends after this long without a request (SESSION_IDLE_TIMEOUT_MS); callers may ask for less. */
  sessionIdleTimeoutMs: number;
  /** A session ends at this age, busy or not (SESSION_MAX_LIFETIME_MS). */
  sessionMaxLifetimeMs: number;
  /** Cache reads of requests that do not say (QUERY_CACHE_DEFAULT=on). */
  queryCacheDefault: boolean;
  queryCacheTtlMs: number;
  /**
   * How long a read bearing a consistency token may wait for a replica to replay its write
   * (CONSISTENCY_WAIT_MS), docs/decisions.md 13; then the primary serves it.
   */
  consistencyWaitMs: number;
  queryCacheMaxEntries: number;
  queryCacheMaxBytes: number;
  /**
   * A Redis shared by every instance for cached results and the statistics' counters
   * (QUERY_CACHE_REDIS_URL, docs/decisions.md 10.27); unset: this process's memory.
   */
  queryCacheRedisUrl?: string;
  /** Longest wait for one Redis call (QUERY_CACHE_REDIS_TIMEOUT_MS); past it the cache is bypassed. */
  queryCacheRedisTimeoutMs: number;
  /**
   * Longest wait for an invalidation after a write (QUERY_CACHE_REDIS_INVALIDATE_TIMEOUT_MS): the
   * write is answered once it reached Redis, or after this long.
   */
  queryCacheRedisInvalidateTimeoutMs: number;
  /** Largest result kept in Redis (QUERY_CACHE_REDIS_MAX_ENTRY_BYTES): Redis serves one call at a time. */
  queryCacheRedisMaxEntryBytes: number;
  /** Prefix of sqlgate's Redis keys (QUERY_CACHE_REDIS_PREFIX), so deployments can share a Redis. */
  queryCacheRedisPrefix: string;
  /**
   * The key under which cache keys name callers' passwords (QUERY_CACHE_SECRET): the same on every
   * instance sharing a Redis cache, which needs one.
   */
  queryCacheSecret?: string;
  /** Contents of SSL_ROOT_CERT, for sslMode verify-full. */
  sslRootCertificate?: string;
  /** ALLOWED_TARGETS as given; unset: any target. */
  allowedTargets?: string;
  /**
   * Named connections, API keys and JWT verification (CONFIG_FILE, docs/decisions.md 12); unset:
   * every request names its own target.
   */
  access?: AccessConfig;
  /** Requests may name a target with its own credentials, as SPEC does (ALLOW_DIRECT_CONNECTIONS). */
  allowDirectConnections: boolean;
  /** STATS_TOKEN; unset: statistics need no token. */
  statsToken?: string;
  /** GET /metrics and the metrics behind it (METRICS=on|off). */
  metrics: boolean;
  /** METRICS_TOKEN; unset: GET /metrics needs no token. */
  metricsToken?: string;
  /** OpenTelemetry spans through the host's SDK, if one is registered (TRACING=on|off). */
  tracing: boolean;
  /** Spans carry the statement's text, literals replaced (OTEL_SQLGATE_STATEMENT=on). */
  traceStatementText: boolean;
  /** Statements slower than this many milliseconds are logged at warn (SLOW_QUERY_MS). */
  slowQueryMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Processes the standalone server (the bin) serves with (WORKERS), docs/decisions.md 10.28. With
   * more than one, a primary process forks them and they share the port; `startServer` always
   * serves in its own process.
   */
  workers: number;
}

export class ConfigError extends Error {}

/** Most processes WORKERS may ask for. */
const MAX_WORKERS = 1024;

type Env = Record<string, string | undefined>;

/** The environment variable each field is read from. */
const VARIABLE_OF: Record<keyof ServerConfig, string> = {
  port: 'PORT',
  hostname: 'HOSTNAME',
  poolMax: 'POOL_MAX',
  poolIdleTimeoutMs: 'POOL_IDLE_TIMEOUT_MS',
  connectTimeoutMs: 'CONNECT_TIMEOUT_MS',
  poolWaitTimeoutMs: 'POOL_WAIT_TIMEOUT_MS',
  poolTargetsMax: 'POOL_TARGETS_MAX',
  poolMaxLifetimeMs: 'POOL_MAX_LIFETIME_MS',
  maxRows: 'MAX_ROWS',
  maxResultBytes: 'MAX_RESULT_BYTES',
  maxResultBytesTotal: 'MAX_RESULT_BYTES_TOTAL',
  maxStatements: 'MAX_STATEMENTS',
  maxBodyBytes: 'MAX_BODY_BYTES',
  maxCopyBytes: 'MAX_COPY_BYTES',
  bodyTimeoutMs: 'BODY_TIMEOUT_MS',
  answerStallTimeoutMs: 'ANSWER_STALL_TIMEOUT_MS',
  maxConnections: 'MAX_CONNECTIONS',
  corsOrigins: 'CORS_ORIGINS',
  allowedHosts: 'ALLOWED_HOSTS',
  trustProxy: 'TRUST_PROXY',
  sessionReset: 'SESSION_RESET',
  preparedStatements: 'PREPARED_STATEMENTS',
  console: 'CONSOLE',
  maxSessions: 'MAX_SESSIONS',
  sessionIdleTimeoutMs: 'SESSION_IDLE_TIMEOUT_MS',
  sessionMaxLifetimeMs: 'SESSION_MAX_LIFETIME_MS',
  queryCacheDefault: 'QUERY_CACHE_DEFAULT',
  queryCacheTtlMs: 'QUERY_CACHE_TTL_MS',
  consistencyWaitMs: 'CONSISTENCY_WAIT_MS',
  queryCacheMaxEntries: 'QUERY_CACHE_MAX_ENTRIES',
  queryCacheMaxBytes: 'QUERY_CACHE_MAX_BYTES',
  queryCacheRedisUrl: 'QUERY_CACHE_REDIS_URL',
  queryCacheRedisTimeoutMs: 'QUERY_CACHE_REDIS_TIMEOUT_MS',
  queryCacheRedisInvalidateTimeoutMs: 'QUERY_CACHE_REDIS_INVALIDATE_TIMEOUT_MS',
  queryCacheRedisMaxEntryBytes: 'QUERY_CACHE_REDIS_MAX_ENTRY_BYTES',
  queryCacheRedisPrefix: 'QUERY_CACHE_REDIS_PREFIX',
  queryCacheSecret: 'QUERY_CACHE_SECRET',
  sslRootCertificate: 'SSL_ROOT_CERT',
  allowedTargets: 'ALLOWED_TARGETS',
  access: 'CONFIG_FILE',
  allowDirectConnections: 'ALLOW_DIRECT_CONNECTIONS',
  statsToken: 'STATS_TOKEN',
  metrics: 'METRICS',
  metricsToken: 'METRICS_TOKEN',
  tracing: 'TRACING',
  traceStatementText: 'OTEL_SQLGATE_STATEMENT',
  slowQueryMs: 'SLOW_QUERY_MS',
  logLevel: 'LOG_LEVEL',
  workers: 'WORKERS',
};

/**
 * The environment without the variables of the fields `given` sets (defined values only). Options
 * passed in code win over the environment, so a bad value there for a field the code sets (a stray
 * `PORT=abc` while the code asks for port 0) must not stop the start.
 */
export function environmentWithout(env: Env, given: Partial<ServerConfig>): Env {
  const remaining = { ...env };
  for (const [field, value] of Object.entries(given)) {
    const variable = VARIABLE_OF[field as keyof ServerConfig];
    if (value !== undefined && variable !== undefined) delete remaining[variable];
  }
  return remaining;
}

/**
 * An eighth of the heap V8 may grow to (512 MiB under Node's default on a machine of 16 GB or
 * more): rows held as objects, then as the answer's JSON text, take about three times their
 * counted bytes, which leaves the heap room for everything else (docs/decisions.md 10.2).
 */
function defaultResultBytesTotal(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / 8);
}

function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = /^[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got '${raw}'`);
  return raw as T;
}

/** A comma list whose every entry `normalise` accepts; undefined when unset or empty. */
function list(env: Env, name: string, normalise: (entry: string) => string): string[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return commaList(raw).map(normalise);
  } catch (error) {
    throw new ConfigError(`${name} must be a comma list: ${(error as Error).message}`);
  }
}

function fileContents(env: Env, name: string): string | undefined {
  const path = env[name];
  if (path === undefined || path === '') return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `${name} must name a readable file, got '${path}' (${(error as Error).message})`,
    );
  }
}

/** Reads and validates every variable; throws ConfigError with one line on the first bad one. */
export function loadConfig(env: Env = process.env): ServerConfig {
  const config: ServerConfig = {
    port: integer(env, 'PORT', 3000, 0, 65535),
    hostname: env.HOSTNAME || '0.0.0.0',
    poolMax: integer(env, 'POOL_MAX', 10, 1, 10_000),
    poolIdleTimeoutMs: integer(env, 'POOL_IDLE_TIMEOUT_MS', 30_000, 1, TIMER_MAX_MS),
    poolMaxLifetimeMs: integer(env, 'POOL_MAX_LIFETIME_MS', 30 * 60_000, 1, TIMER_MAX_MS),
    connectTimeoutMs: integer(env, 'CONNECT_TIMEOUT_MS', 5_000, 1, TIMER_MAX_MS),
    poolWaitTimeoutMs: integer(env, 'POOL_WAIT_TIMEOUT_MS', 10_000, 1, TIMER_MAX_MS),
    poolTargetsMax: integer(env, 'POOL_TARGETS_MAX', 100, 1),
    maxRows: integer(env, 'MAX_ROWS', 10_000, 1, 1_000_000),
    maxResultBytes: integer(env, 'MAX_RESULT_BYTES', 64 * 1024 * 1024, 1024, 2 ** 31 - 1),
    maxResultBytesTotal: integer(env, 'MAX_RESULT_BYTES_TOTAL', defaultResultBytesTotal(), 0),
    maxStatements: integer(env, 'MAX_STATEMENTS', 10_000, 1),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024, 1),
    maxCopyBytes: integer(env, 'MAX_COPY_BYTES', 10 * 1024 ** 3, 1),
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_MS', 10_000, 1, TIMER_MAX_MS),
    answerStallTimeoutMs: integer(
      env,
      'ANSWER_STALL_TIMEOUT_MS',
      DEFAULT_ANSWER_STALL_TIMEOUT_MS,
      1,
      TIMER_MAX_MS,
    ),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 1000, 1),
    sessionReset: oneOf(env, 'SESSION_RESET', ['auto', 'always'] as const, 'auto'),
    preparedStatements: oneOf(env, 'PREPARED_STATEMENTS', ['on', 'off'] as const, 'on') === 'on',
    console: oneOf(env, 'CONSOLE', ['on', 'off'] as const, 'on') === 'on',
    maxSessions: integer(env, 'MAX_SESSIONS', 100, 0, 100_000),
    sessionIdleTimeoutMs: integer(env, 'SESSION_IDLE_TIMEOUT_MS', 60_000, 1, TIMER_MAX_MS),
    sessionMaxLifetimeMs: integer(env, 'SESSION_MAX_LIFETIME_MS', 15 * 60_000, 1, TIMER_MAX_MS),
    queryCacheDefault: oneOf(env, 'QUERY_CACHE_DEFAULT', ['on', 'off'] as const, 'off') === 'on',
    queryCacheTtlMs: integer(env, 'QUERY_CACHE_TTL_MS', 60_000, 1),
    consistencyWaitMs: integer(env, 'CONSISTENCY_WAIT_MS', 500, 0, 60_000),
    queryCacheMaxEntries: integer(env, 'QUERY_CACHE_MAX_ENTRIES', 1000, 1),
    queryCacheMaxBytes: integer(env, 'QUERY_CACHE_MAX_BYTES', 64 * 1024 * 1024, 1),
    queryCacheRedisTimeoutMs: integer(env, 'QUERY_CACHE_REDIS_TIMEOUT_MS', 50, 1, 60_000),
    queryCacheRedisInvalidateTimeoutMs: integer(
      env,
      'QUERY_CACHE_REDIS_INVALIDATE_TIMEOUT_MS',
      1000,
      1,
      60_000,
    ),
    queryCacheRedisMaxEntryBytes: integer(
      env,
      'QUERY_CACHE_REDIS_MAX_ENTRY_BYTES',
      1024 * 1024,
      1,
      512 * 1024 * 1024,
    ),
    queryCacheRedisPrefix: redisKeyPrefix(env),
    metrics: oneOf(env, 'METRICS', ['on', 'off'] as const, 'on') === 'on',
    tracing: oneOf(env, 'TRACING', ['on', 'off'] as const, 'on') === 'on',
    traceStatementText:
      oneOf(env, 'OTEL_SQLGATE_STATEMENT', ['on', 'off'] as const, 'off') === 'on',
    slowQueryMs: integer(env, 'SLOW_QUERY_MS', 1000, 0),
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    // A bound, so that a typo cannot fork thousands of processes.
    workers: integer(env, 'WORKERS', 1, 1, MAX_WORKERS),
    allowDirectConnections: ['true', 'on'].includes(
      oneOf(env, 'ALLOW_DIRECT_CONNECTIONS', ['true', 'false', 'on', 'off'] as const, 'true'),
    ),
  };
  if (env.CONFIG_FILE) config.access = readAccessConfig(env.CONFIG_FILE, env);
  if (!config.allowDirectConnections && !config.access) {
    throw new ConfigError(
      'ALLOW_DIRECT_CONNECTIONS=false needs CONFIG_FILE: without named connections no request could run',
    );
  }
  if (env.ALLOWED_TARGETS) {
    try {
      createAllowedTargets(env.ALLOWED_TARGETS);
    } catch (error) {
      throw new ConfigError(
        `ALLOWED_TARGETS must be a comma list of host names, host:port, IP addresses or CIDR ranges: ${(error as Error).message}`,
      );
    }
    config.allowedTargets = env.ALLOWED_TARGETS;
  }
  if (env.STATS_TOKEN) config.statsToken = env.STATS_TOKEN;
  if (env.METRICS_TOKEN) config.metricsToken = env.METRICS_TOKEN;
  const corsOrigins = list(env, 'CORS_ORIGINS', normaliseOrigin);
  if (corsOrigins) config.corsOrigins = corsOrigins;
  const allowedHosts = list(env, 'ALLOWED_HOSTS', normaliseHostName);
  if (allowedHosts) config.allowedHosts = allowedHosts;
  const trustProxy = list(env, 'TRUST_PROXY', proxyAddress);
  if (trustProxy) config.trustProxy = trustProxy;
  const redisUrl = redisUrlOf(env);
  if (redisUrl) config.queryCacheRedisUrl = redisUrl;
  if (env.QUERY_CACHE_SECRET) config.queryCacheSecret = cacheSecretOf(env.QUERY_CACHE_SECRET);
  const sslRootCertificate = fileContents(env, 'SSL_ROOT_CERT');
  if (sslRootCertificate) config.sslRootCertificate = sslRootCertificate;
  return config;
}

/** A TRUST_PROXY entry: an IP address, a CIDR range, or a name Express gives to a set of ranges. */
function proxyAddress(entry: string): string {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return entry;
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  const maxBits = family === 4 ? 32 : 128;
  const validBits = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= maxBits);
  if (family === 0 || !validBits || extra !== undefined) {
    throw new Error(
      `'${entry}' is not an IP address, a CIDR range, loopback, linklocal or uniquelocal`,
    );
  }
  return entry;
}

/**
 * QUERY_CACHE_REDIS_URL: redis:// or rediss:// (TLS). The error never repeats the value, which may
 * hold a password.
 */
function redisUrlOf(env: Env): string | undefined {
  const raw = env.QUERY_CACHE_REDIS_URL?.trim();
  if (!raw) return undefined;
  let protocol: string | undefined;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new ConfigError(
      'QUERY_CACHE_REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://:password@127.0.0.1:6379/0',
    );
  }
  return raw;
}

/** QUERY_CACHE_REDIS_PREFIX: printable ASCII without spaces, so keys stay readable in redis-cli. */
function redisKeyPrefix(env: Env): string {
  const raw = env.QUERY_CACHE_REDIS_PREFIX;
  if (raw === undefined || raw === '') return 'sqlgate:';
  if (!/^[\x21-\x7e]{1,64}$/.test(raw)) {
    throw new ConfigError(
      'QUERY_CACHE_REDIS_PREFIX must be 1 to 64 printable ASCII characters without spaces',
    );
  }
  return raw;
}

/** Shortest QUERY_CACHE_SECRET: an HMAC key guessed is every password in the cache's keys exposed. */
const MIN_CACHE_SECRET_LENGTH = 32;

/** QUERY_CACHE_SECRET, checked; the error never repeats it. */
export function cacheSecretOf(secret: string): string {
  if (secret.length < MIN_CACHE_SECRET_LENGTH) {
    throw new ConfigError(
      `QUERY_CACHE_SECRET must be at least ${MIN_CACHE_SECRET_LENGTH} characters, e.g. the output of: openssl rand -base64 32`,
    );
  }
  return secret;
}
