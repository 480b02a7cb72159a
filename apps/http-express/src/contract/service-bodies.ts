/**
 * The bodies of the endpoints around the query: connection test, pool and cache statistics, health.
 */
import { Type } from '@sinclair/typebox';
import { NonNegativeInteger, NonNegativeNumber } from './schema-builders';
import { ConnectionErrorObjectSchema, WarningsSchema } from './responses';

export const ConnectionTestSuccessSchema = Type.Object(
  {
    success: Type.Literal(true),
    message: Type.Literal('Connection successful'),
    serverVersion: Type.String({ description: "The server's server_version setting." }),
    database: Type.String({ description: 'The database connected to.' }),
    user: Type.String({ description: 'The user connected as.' }),
    ssl: Type.Boolean({ description: 'Whether the connection uses TLS.' }),
    latencyMs: NonNegativeNumber('Milliseconds to connect and run the check query.'),
    warnings: Type.Optional(WarningsSchema),
  },
  { $id: 'ConnectionTestSuccess', description: 'The connection succeeded.' },
);

export const ConnectionTestFailureSchema = Type.Object(
  {
    success: Type.Literal(false),
    error: ConnectionErrorObjectSchema,
    warnings: Type.Optional(WarningsSchema),
  },
  {
    $id: 'ConnectionTestFailure',
    description:
      'The connection test failed. error.code: the SQLSTATE (e.g. 28P01, 3D000), the system code (ECONNREFUSED, ETIMEDOUT...), ' +
      'or for an invalid request MISSING_FIELDS or INVALID_REQUEST.',
  },
);

export const PoolStatSchema = Type.Object(
  {
    poolId: Type.String({ description: 'host:port:user:database of the target.' }),
    totalConnections: NonNegativeInteger('Connections in the pool.'),
    idleConnections: NonNegativeInteger('Idle connections available.'),
    activeConnections: NonNegativeInteger('Connections in use.'),
    waitingClients: NonNegativeInteger('Requests waiting for a connection.'),
  },
  { $id: 'PoolStat', description: 'One connection pool.' },
);

export const PoolStatsResponseSchema = Type.Object(
  {
    stats: Type.Array(PoolStatSchema, {
      description: 'One element per pool; empty when no pool exists.',
    }),
  },
  { $id: 'PoolStatsResponse', description: 'Statistics of every connection pool.' },
);

export const PoolStatsFailureSchema = Type.Object(
  {
    error: Type.Literal('Failed to retrieve pool statistics'),
    stats: Type.Array(Type.Unknown(), { maxItems: 0 }),
  },
  { $id: 'PoolStatsFailure', description: 'The pool statistics could not be read.' },
);

export const CacheStatsSchema = Type.Object(
  {
    totalQueries: NonNegativeInteger(
      'Every statement handled by POST /api/query, cache hits included.',
    ),
    cacheHits: NonNegativeInteger('Statements served from the cache.'),
    cacheMisses: NonNegativeInteger('Every other statement.'),
    hitRate: Type.Number({
      minimum: 0,
      maximum: 100,
      description:
        'cacheHits / totalQueries × 100, rounded to 2 decimals; 0 when totalQueries is 0.',
    }),
    avgExecutionTime: NonNegativeNumber(
      'Mean milliseconds of the statements that ran in the database, rounded to 3 decimals; 0 when none ran.',
    ),
    cacheSize: NonNegativeInteger('Live entries in the cache.'),
  },
  {
    $id: 'CacheStats',
    description: 'Result cache counters. cacheHits + cacheMisses = totalQueries.',
  },
);

export const CacheEntrySchema = Type.Object(
  {
    query: Type.String({ description: 'The cached statement text.' }),
    executionTime: NonNegativeNumber('Milliseconds the statement took when it was cached.'),
    timestamp: Type.String({
      format: 'date-time',
      description: 'ISO 8601 time at which it was cached.',
    }),
    hits: NonNegativeInteger('Times the entry was served.'),
  },
  { $id: 'CacheEntry', description: 'One cached result (never its rows).' },
);

export const CacheStatisticsResponseSchema = Type.Object(
  {
    stats: CacheStatsSchema,
    entries: Type.Array(CacheEntrySchema, {
      maxItems: 10,
      description: 'The 10 most recently cached entries, newest first.',
    }),
  },
  { $id: 'CacheStatisticsResponse', description: 'Result cache counters and recent entries.' },
);

export const CacheStatisticsFailureSchema = Type.Object(
  {
    error: Type.Literal('Failed to retrieve cache statistics'),
    stats: Type.Unsafe({ allOf: [CacheStatsSchema], description: 'Every counter 0.' }),
    entries: Type.Array(Type.Unknown(), { maxItems: 0 }),
  },
  { $id: 'CacheStatisticsFailure', description: 'The cache statistics could not be read.' },
);

export const CacheClearedSchema = Type.Object(
  { success: Type.Literal(true), message: Type.Literal('Cache cleared successfully') },
  { $id: 'CacheCleared', description: 'The cache is empty.' },
);

export const CacheClearFailureSchema = Type.Object(
  { error: Type.Literal('Failed to clear cache') },
  { $id: 'CacheClearFailure', description: 'The cache could not be cleared.' },
);

export const HealthSchema = Type.Union(
  [
    Type.Object({ status: Type.Literal('ok') }),
    Type.Object({
      status: Type.Literal('degraded'),
      cache: Type.Literal('unavailable', {
        description:
          "The result cache's Redis (QUERY_CACHE_REDIS_URL) does not answer: statements run uncached.",
      }),
    }),
  ],
  {
    $id: 'Health',
    description:
      'The process serves requests: `ok`, or `degraded` while a part it can do without does not answer (answered 200 all the same).',
  },
);

export const ServerTimingValueSchema = Type.String({
  $id: 'ServerTimingValue',
  description:
    'Server-Timing header value: pool wait, execution and serialisation, in milliseconds with 3 decimals.',
  pattern: '^pool;dur=[0-9]+\\.[0-9]{3}, exec;dur=[0-9]+\\.[0-9]{3}, ser;dur=[0-9]+\\.[0-9]{3}$',
});

export const OpenApiDocumentSchema = Type.Object(
  {
    openapi: Type.Literal('3.1.0'),
    // Open objects: a bare {type: 'object'} is generated as an object without keys.
    info: Type.Object({}, { additionalProperties: Type.Unknown() }),
    paths: Type.Object({}, { additionalProperties: Type.Unknown() }),
  },
  { $id: 'OpenApiDocument', description: 'This document.' },
);

export const MetricsExpositionSchema = Type.String({
  $id: 'MetricsExposition',
  description: 'Prometheus text format 0.0.4: `# HELP`, `# TYPE` and one sample per line.',
});
