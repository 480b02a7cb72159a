/**
 * The OpenAPI 3.1 description of every endpoint, served at GET /api/openapi.json.
 *
 * Response schemas list every property the service can send and require exactly the ones it always
 * sends. Response objects stay open (`additionalProperties` is not closed) unless a closed object is
 * what tells two error shapes apart: `ErrorMessage` and `ConnectionErrorObject` are closed so that
 * each `oneOf` below matches exactly one shape.
 */

/** A JSON Schema 2020-12 object, as OpenAPI 3.1 uses them. */
type Schema = { [keyword: string]: unknown };

/** The document's shape, typed loosely: it is data for clients, not for the code. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: {
    title: string;
    version: string;
    description: string;
    license: { name: string; identifier: string };
  };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Schema>>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, Schema>;
    headers: Record<string, Schema>;
    securitySchemes: Record<string, Schema>;
  };
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string): Schema => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });

/** A JSON response with its schema and, where the code sends them, its headers. */
function jsonResponse(
  description: string,
  schema: Schema,
  headers?: Record<string, Schema>,
): Schema {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema } },
  };
}

const nonNegativeNumber = (description: string): Schema => ({
  type: 'number',
  minimum: 0,
  description,
});
const nonNegativeInteger = (description: string): Schema => ({
  type: 'integer',
  minimum: 0,
  description,
});

/** Headers of every answer of POST /api/query that reached the query service. */
const queryHeaders: Record<string, Schema> = { 'Server-Timing': headerRef('ServerTiming') };
/** A 400 may come before the query service (a body that is not JSON): no Server-Timing then. */
const queryHeadersOfBadRequest: Record<string, Schema> = {
  'Server-Timing': {
    description:
      'As on every other answer of this operation; absent when the body was not valid JSON.',
    schema: { $ref: '#/components/schemas/ServerTimingValue' },
  },
};
const queryHeadersWithRetry: Record<string, Schema> = {
  'Server-Timing': headerRef('ServerTiming'),
  'Retry-After': headerRef('RetryAfter'),
};

/** Bodies a database failure can produce; the SQLSTATE decides the status. */
const databaseFailures = [
  ref('QueryErrorResponse'),
  ref('TransactionFailureResponse'),
  ref('MultipleStatementsFailure'),
];

/** The three statistics endpoints: open by default, a bearer token when STATS_TOKEN is set. */
const statsSecurity = [{}, { statsToken: [] }];

/** Where to connect and as whom: the same fields in both request bodies. */
const targetFields: Record<string, Schema> = {
  host: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: '^[^/]',
    description:
      'Database server host name or IP address. A Unix socket path (starting with /) is refused.',
  },
  port: ref('Port'),
  user: { type: 'string', minLength: 1, description: 'Database user name.' },
};

const schemas: Record<string, Schema> = {
  QueryRequest: {
    type: 'object',
    description:
      'Body of POST /api/query: where to connect, as whom, and the SQL text. Unknown fields are ignored and never reach ' +
      'the database driver. A field that is null is treated as absent; an empty string counts as missing for the ' +
      'required fields.',
    required: ['host', 'port', 'user', 'database', 'sql'],
    properties: {
      ...targetFields,
      password: {
        type: 'string',
        description:
          'Database password. When absent no password is sent (trust authentication); the service never uses its own ' +
          'credentials.',
      },
      database: { type: 'string', minLength: 1, description: 'Database name.' },
      sql: {
        type: 'string',
        minLength: 1,
        description:
          'One or more SQL statements separated by semicolons (at most MAX_STATEMENTS, 10000 by default). Text yielding ' +
          'no statement is answered with 400 "No valid SQL statements found".',
      },
      sslMode: ref('SslMode'),
      params: {
        type: 'array',
        description: 'Values bound to $1..$n. Only with exactly one statement, otherwise 400.',
        items: {},
      },
      timeoutMs: {
        type: 'integer',
        minimum: 1,
        maximum: 2147483647,
        description:
          'Statement timeout for this request in milliseconds; exceeding it cancels the statement in the database ' +
          '(SQLSTATE 57014, status 504).',
      },
      maxRows: {
        type: 'integer',
        minimum: 1,
        maximum: 1000000,
        description:
          'Rows returned per statement (default MAX_ROWS, 10000). When more rows exist, the first maxRows are returned ' +
          'with truncated: true.',
      },
      rowMode: {
        type: 'string',
        enum: ['object', 'array'],
        default: 'object',
        description:
          'object: rows keyed by column name. array: rows as arrays in column order (no loss when two columns share a name).',
      },
      readOnly: {
        type: 'boolean',
        default: false,
        description:
          'Run every statement in a READ ONLY transaction; writes fail with SQLSTATE 25006.',
      },
      cache: {
        description:
          'Whether a read statement may be served from, and stored in, the result cache. true: with the server TTL ' +
          '(QUERY_CACHE_TTL_MS); {ttlMs}: with this TTL; false: never. Absent: the server default (QUERY_CACHE_DEFAULT).',
        oneOf: [
          { type: 'boolean' },
          {
            type: 'object',
            properties: {
              ttlMs: {
                type: 'integer',
                minimum: 1,
                maximum: 2147483647,
                description: 'Time to live of the cached result in milliseconds.',
              },
            },
          },
        ],
      },
      isolationLevel: {
        type: 'string',
        enum: ['read committed', 'repeatable read', 'serializable'],
        default: 'read committed',
        description:
          'Isolation level of the transaction the service opens (matched case-insensitively).',
      },
      dryRun: {
        type: 'boolean',
        default: false,
        description:
          'Run the statements in one transaction and roll it back at the end: results are returned, the database keeps ' +
          'nothing (the response says rolledBack: true).',
      },
    },
  },
  ConnectionTestRequest: {
    type: 'object',
    description:
      'Body of POST /api/test-connection. One connection is opened outside the pools, with a 5000 ms connect timeout.',
    required: ['host', 'port', 'user'],
    properties: {
      ...targetFields,
      password: {
        type: 'string',
        description: 'Database password. When absent no password is sent.',
      },
      database: {
        type: 'string',
        default: 'postgres',
        description: 'Database name; postgres when omitted.',
      },
      sslMode: ref('SslMode'),
    },
  },
  Port: {
    description: 'Database server port: an integer, or a string of digits, from 1 to 65535.',
    oneOf: [
      { type: 'integer', minimum: 1, maximum: 65535 },
      { type: 'string', pattern: '^[0-9]{1,5}$' },
    ],
  },
  SslMode: {
    type: 'string',
    enum: ['disable', 'require', 'prefer', 'verify-full'],
    default: 'prefer',
    description:
      'disable: plain. require: TLS without certificate verification. prefer (default): TLS without verification, ' +
      'plain when the server refuses TLS. verify-full: TLS with certificate and host name verification.',
  },
  Rows: {
    description:
      'Result rows. With rowMode object (default): objects keyed by column name. With rowMode array: arrays in column ' +
      'order. Values: boolean, number (int2, int4, oid, float4, float8), string (int8, numeric, money, dates and times as ' +
      'PostgreSQL prints them, bytea as \\x hex, every other type as PostgreSQL text), parsed JSON (json, jsonb), arrays ' +
      'of those, or null. Empty for statements that return no rows.',
    anyOf: [
      { type: 'array', items: { type: 'object' } },
      { type: 'array', items: { type: 'array' } },
    ],
  },
  FieldDescription: {
    type: 'object',
    description: 'Column metadata as the server described it, plus the name of the type.',
    required: [
      'name',
      'dataTypeID',
      'dataTypeName',
      'tableID',
      'columnID',
      'dataTypeSize',
      'dataTypeModifier',
      'format',
    ],
    properties: {
      name: { type: 'string', description: 'Column name.' },
      dataTypeID: { type: 'integer', description: 'OID of the column type.' },
      dataTypeName: {
        type: 'string',
        description: 'Name of the column type, e.g. int4, timestamptz, or a custom type name.',
      },
      tableID: {
        type: 'integer',
        description: 'OID of the table the column comes from; 0 when it is not a table column.',
      },
      columnID: {
        type: 'integer',
        description:
          'Attribute number of the column in its table; 0 when it is not a table column.',
      },
      dataTypeSize: {
        type: 'integer',
        description: 'Size of the type in bytes; negative for variable-length types.',
      },
      dataTypeModifier: {
        type: 'integer',
        description: 'Type modifier (e.g. varchar length); -1 when none.',
      },
      format: {
        type: 'string',
        enum: ['text', 'binary'],
        description: 'Wire format of the column.',
      },
    },
  },
  QueryExecutionResult: {
    type: 'object',
    description: 'The result of one statement that succeeded.',
    required: ['rows', 'fields', 'rowCount', 'command', 'executionTime', 'statement'],
    properties: {
      rows: ref('Rows'),
      fields: {
        type: 'array',
        items: ref('FieldDescription'),
        description: 'Column metadata; empty when the statement returns no rows.',
      },
      rowCount: {
        type: ['integer', 'null'],
        minimum: 0,
        description:
          'Rows affected or returned, from the command tag; null when the server sent none.',
      },
      command: {
        type: ['string', 'null'],
        description:
          'Command tag verb, e.g. SELECT, INSERT, UPDATE, DELETE, CREATE; null when the server sent none.',
      },
      executionTime: nonNegativeNumber('Execution time in milliseconds.'),
      statement: {
        type: 'string',
        description:
          'The executed statement text (comments removed, whitespace normalised), followed by ; when the submitted text terminated it with one.',
      },
      truncated: {
        type: 'boolean',
        const: true,
        description: 'Present when more rows existed than maxRows.',
      },
      cached: {
        type: 'boolean',
        const: true,
        description: 'Present when the result was served from the result cache.',
      },
      rolledBack: {
        type: 'boolean',
        const: true,
        description:
          'Present when nothing the request did was kept (dryRun, or a transaction the statement left open).',
      },
    },
  },
  FailedStatementResult: {
    type: 'object',
    description: 'The entry of results for the statement that failed in a multi-statement request.',
    required: ['error', 'executionTime', 'statement', 'cause'],
    properties: {
      error: { type: 'string', description: 'The database error message.' },
      executionTime: nonNegativeNumber('Milliseconds elapsed until the failure.'),
      statement: { type: 'string', description: 'The statement text, as in QueryExecutionResult.' },
      cause: ref('QueryErrorObject'),
    },
  },
  StatementResult: {
    description: 'One entry of results: a statement that succeeded or the one that failed.',
    oneOf: [ref('QueryExecutionResult'), ref('FailedStatementResult')],
  },
  MultipleStatementsResponse: {
    type: 'object',
    description:
      'The response to several statements. Reads only: run in parallel, no transactionUsed. With BEGIN/COMMIT/SAVEPOINT...: ' +
      'run as written, transactionUsed false. With VACUUM, CREATE DATABASE, ... CONCURRENTLY: run in order in autocommit, ' +
      'transactionUsed false. Otherwise: wrapped in one transaction, transactionUsed true.',
    required: ['multipleResults', 'results', 'totalExecutionTime'],
    properties: {
      multipleResults: { type: 'boolean', const: true, description: 'Always true.' },
      results: {
        type: 'array',
        items: ref('StatementResult'),
        description:
          'One entry per statement that ran, in statement order; a strategy that stops at a failure omits the statements after it.',
      },
      totalExecutionTime: nonNegativeNumber(
        'Total milliseconds of the request; for parallel reads not the sum of the parts.',
      ),
      transactionUsed: {
        type: 'boolean',
        description:
          'Whether the service wrapped the statements in a transaction of its own; absent for parallel reads.',
      },
      rolledBack: {
        type: 'boolean',
        const: true,
        description:
          'Present when nothing the request did was kept (dryRun, or a transaction the script left open).',
      },
      error: {
        type: 'string',
        description:
          "Present on failure: 'One or more statements failed', or 'The script left a transaction open; it was rolled back'.",
      },
      failedStatementIndex: nonNegativeInteger(
        '0-based index of the failed statement, when a statement failed.',
      ),
    },
  },
  MultipleStatementsFailure: {
    description:
      'A multi-statement request outside the service transaction that failed (the parallel path is always status 400).',
    allOf: [ref('MultipleStatementsResponse'), { required: ['error'] }],
  },
  TransactionFailureResponse: {
    type: 'object',
    description:
      'A statement (or COMMIT) failed inside the transaction the service opened; every change of the request was rolled back.',
    required: [
      'error',
      'transactionUsed',
      'rolledBack',
      'failedStatementIndex',
      'results',
      'cause',
      'totalExecutionTime',
    ],
    properties: {
      error: {
        type: 'string',
        pattern: '^Transaction failed at statement: ',
        description:
          "'Transaction failed at statement: <first 100 characters of the statement>... Error: <database message>'.",
      },
      transactionUsed: { type: 'boolean', const: true },
      rolledBack: { type: 'boolean', const: true },
      failedStatementIndex: nonNegativeInteger(
        '0-based index of the failing statement; the number of statements when COMMIT failed.',
      ),
      results: {
        type: 'array',
        items: ref('QueryExecutionResult'),
        description:
          'Results of the statements before the failing one; their changes were rolled back.',
      },
      cause: ref('QueryErrorObject'),
      totalExecutionTime: nonNegativeNumber('Total milliseconds of the request.'),
    },
  },
  QueryErrorObject: {
    type: 'object',
    description:
      'A database error with every field the server sent, and where it points in the submitted text. Optional fields are ' +
      'present only when the server (or the position) gives them.',
    required: ['message', 'code', 'executionTime'],
    properties: {
      message: { type: 'string', description: 'Database error message.' },
      code: { type: 'string', description: 'SQLSTATE, e.g. 42601, 23505, 57014.' },
      severity: { type: 'string', description: 'Severity label, e.g. ERROR, FATAL.' },
      routine: { type: 'string', description: 'Server routine that raised the error.' },
      executionTime: nonNegativeNumber('Milliseconds elapsed.'),
      detail: { type: 'string' },
      hint: { type: 'string' },
      position: {
        type: 'string',
        pattern: '^[0-9]+$',
        description: '1-based character position within the statement text.',
      },
      where: { type: 'string', description: 'Context (call stack) of the error.' },
      schema: { type: 'string' },
      table: { type: 'string' },
      column: { type: 'string' },
      dataType: { type: 'string' },
      constraint: { type: 'string' },
      internalPosition: { type: 'string' },
      internalQuery: { type: 'string' },
      statementIndex: nonNegativeInteger(
        '0-based index of the failing statement; absent when the error came before any statement ran (e.g. at login).',
      ),
      location: {
        type: 'object',
        description:
          'Line and column (1-based) of position, or of the start of the statement, within the submitted SQL text.',
        required: ['line', 'column'],
        properties: {
          line: { type: 'integer', minimum: 1 },
          column: { type: 'integer', minimum: 1 },
        },
      },
    },
  },
  QueryErrorResponse: {
    type: 'object',
    description:
      'A single statement failed in the database, or the database refused the login or the database name.',
    required: ['error'],
    properties: { error: ref('QueryErrorObject') },
  },
  ConnectionErrorObject: {
    type: 'object',
    description:
      'Talking to the target failed outside a statement. code: the SQLSTATE when the server sent one, else the system ' +
      'code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, ECONNRESET...), or POOL_EXHAUSTED.',
    required: ['message', 'code'],
    additionalProperties: false,
    properties: { message: { type: 'string' }, code: { type: 'string', minLength: 1 } },
  },
  ConnectionFailureResponse: {
    type: 'object',
    description: 'The target was refused, unreachable, timed out or had no free pooled connection.',
    required: ['error'],
    properties: { error: ref('ConnectionErrorObject') },
  },
  ErrorMessage: {
    type: 'object',
    description:
      "A request that cannot be run as sent, or an error outside the query service: e.g. 'Missing required fields', " +
      "'No valid SQL statements found', 'Request body is not valid JSON', 'Request body too large', a sentence naming " +
      'the wrong field, unknown path or wrong method.',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: { type: 'string' },
      missing: {
        type: 'array',
        items: { type: 'string' },
        minItems: 1,
        description: "With 'Missing required fields': the names of the missing fields.",
      },
      statementIndex: nonNegativeInteger(
        '0-based index of the statement the error is about (an unsupported statement, an option it cannot be combined with).',
      ),
    },
  },
  ConnectionTestSuccess: {
    type: 'object',
    description: 'The connection succeeded.',
    required: ['success', 'message', 'serverVersion', 'database', 'user', 'ssl', 'latencyMs'],
    properties: {
      success: { type: 'boolean', const: true },
      message: { type: 'string', const: 'Connection successful' },
      serverVersion: { type: 'string', description: "The server's server_version setting." },
      database: { type: 'string', description: 'The database connected to.' },
      user: { type: 'string', description: 'The user connected as.' },
      ssl: { type: 'boolean', description: 'Whether the connection uses TLS.' },
      latencyMs: nonNegativeNumber('Milliseconds to connect and run the check query.'),
    },
  },
  ConnectionTestFailure: {
    type: 'object',
    description:
      'The connection test failed. error.code: the SQLSTATE (e.g. 28P01, 3D000), the system code (ECONNREFUSED, ETIMEDOUT...), ' +
      'or for an invalid request MISSING_FIELDS or INVALID_REQUEST.',
    required: ['success', 'error'],
    properties: {
      success: { type: 'boolean', const: false },
      error: ref('ConnectionErrorObject'),
    },
  },
  PoolStat: {
    type: 'object',
    description: 'One connection pool.',
    required: [
      'poolId',
      'totalConnections',
      'idleConnections',
      'activeConnections',
      'waitingClients',
    ],
    properties: {
      poolId: { type: 'string', description: 'host:port:user:database of the target.' },
      totalConnections: nonNegativeInteger('Connections in the pool.'),
      idleConnections: nonNegativeInteger('Idle connections available.'),
      activeConnections: nonNegativeInteger('Connections in use.'),
      waitingClients: nonNegativeInteger('Requests waiting for a connection.'),
    },
  },
  PoolStatsResponse: {
    type: 'object',
    required: ['stats'],
    properties: {
      stats: {
        type: 'array',
        items: ref('PoolStat'),
        description: 'One element per pool; empty when no pool exists.',
      },
    },
  },
  PoolStatsFailure: {
    type: 'object',
    required: ['error', 'stats'],
    properties: {
      error: { type: 'string', const: 'Failed to retrieve pool statistics' },
      stats: { type: 'array', maxItems: 0 },
    },
  },
  CacheStats: {
    type: 'object',
    description: 'Result cache counters. cacheHits + cacheMisses = totalQueries.',
    required: [
      'totalQueries',
      'cacheHits',
      'cacheMisses',
      'hitRate',
      'avgExecutionTime',
      'cacheSize',
    ],
    properties: {
      totalQueries: nonNegativeInteger(
        'Every statement handled by POST /api/query, cache hits included.',
      ),
      cacheHits: nonNegativeInteger('Statements served from the cache.'),
      cacheMisses: nonNegativeInteger('Every other statement.'),
      hitRate: {
        type: 'number',
        minimum: 0,
        maximum: 100,
        description:
          'cacheHits / totalQueries × 100, rounded to 2 decimals; 0 when totalQueries is 0.',
      },
      avgExecutionTime: nonNegativeNumber(
        'Mean milliseconds of the statements that ran in the database, rounded to 3 decimals; 0 when none ran.',
      ),
      cacheSize: nonNegativeInteger('Live entries in the cache.'),
    },
  },
  CacheEntry: {
    type: 'object',
    description: 'One cached result (never its rows).',
    required: ['query', 'executionTime', 'timestamp', 'hits'],
    properties: {
      query: { type: 'string', description: 'The cached statement text.' },
      executionTime: nonNegativeNumber('Milliseconds the statement took when it was cached.'),
      timestamp: {
        type: 'string',
        format: 'date-time',
        description: 'ISO 8601 time at which it was cached.',
      },
      hits: nonNegativeInteger('Times the entry was served.'),
    },
  },
  CacheStatisticsResponse: {
    type: 'object',
    required: ['stats', 'entries'],
    properties: {
      stats: ref('CacheStats'),
      entries: {
        type: 'array',
        maxItems: 10,
        items: ref('CacheEntry'),
        description: 'The 10 most recently cached entries, newest first.',
      },
    },
  },
  CacheStatisticsFailure: {
    type: 'object',
    required: ['error', 'stats', 'entries'],
    properties: {
      error: { type: 'string', const: 'Failed to retrieve cache statistics' },
      stats: { allOf: [ref('CacheStats')], description: 'Every counter 0.' },
      entries: { type: 'array', maxItems: 0 },
    },
  },
  CacheCleared: {
    type: 'object',
    required: ['success', 'message'],
    properties: {
      success: { type: 'boolean', const: true },
      message: { type: 'string', const: 'Cache cleared successfully' },
    },
  },
  CacheClearFailure: {
    type: 'object',
    required: ['error'],
    properties: { error: { type: 'string', const: 'Failed to clear cache' } },
  },
  Health: {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', const: 'ok' } },
  },
  ServerTimingValue: {
    type: 'string',
    description:
      'Server-Timing header value: pool wait, execution and serialisation, in milliseconds with 3 decimals.',
    pattern: '^pool;dur=[0-9]+\\.[0-9]{3}, exec;dur=[0-9]+\\.[0-9]{3}, ser;dur=[0-9]+\\.[0-9]{3}$',
  },
  OpenApiDocument: {
    type: 'object',
    description: 'This document.',
    required: ['openapi', 'info', 'paths'],
    properties: {
      openapi: { type: 'string', const: '3.1.0' },
      info: { type: 'object' },
      paths: { type: 'object' },
    },
  },
};

const queryExamples: Schema = {
  single: {
    summary: 'One statement',
    value: {
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      password: 'secret',
      database: 'test',
      sql: 'SELECT 1 AS one',
    },
  },
  transaction: {
    summary: 'Writes, wrapped in one transaction',
    value: {
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      database: 'test',
      sql: "INSERT INTO items (name) VALUES ('a'); SELECT count(*) FROM items;",
      isolationLevel: 'serializable',
    },
  },
  options: {
    summary: 'Parameters, array rows, a cached result and a time limit',
    value: {
      host: '127.0.0.1',
      port: '5432',
      user: 'postgres',
      database: 'test',
      sql: 'SELECT id, name FROM items WHERE id = $1',
      params: [42],
      rowMode: 'array',
      maxRows: 100,
      timeoutMs: 2000,
      cache: { ttlMs: 30000 },
    },
  },
};

/** The OpenAPI 3.1 description of every endpoint, served at GET /api/openapi.json. */
export const openApiDocument: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'sqlgate',
    version: '0.1.0',
    description:
      'Runs SQL against a PostgreSQL server named in each request, and reports on its connection pools and result cache. ' +
      'Every response is JSON, errors included. Unknown paths answer 404 and known paths with another method answer 405 ' +
      'with an Allow header (see components.responses NotFound and MethodNotAllowed). A body larger than MAX_BODY_BYTES ' +
      '(1 MiB by default) answers 413.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  tags: [
    { name: 'query', description: 'Running SQL.' },
    { name: 'connection', description: 'Checking a target.' },
    {
      name: 'statistics',
      description: 'Connection pools and the result cache; no database is touched.',
    },
    { name: 'service', description: 'The service itself.' },
  ],
  paths: {
    '/api/query': {
      post: {
        tags: ['query'],
        operationId: 'executeQuery',
        summary: 'Run one or more SQL statements',
        description:
          'One statement runs directly (autocommit) and answers with a QueryExecutionResult. Several statements answer ' +
          'with a MultipleStatementsResponse: reads only run in parallel, each in a READ ONLY transaction; scripts with ' +
          'transaction control run as written; statements that cannot run in a transaction run in order in autocommit; ' +
          'anything else is wrapped in one transaction (BEGIN, COMMIT, ROLLBACK on failure).',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('QueryRequest'), examples: queryExamples } },
        },
        responses: {
          '200': jsonResponse(
            'Every statement succeeded.',
            { oneOf: [ref('QueryExecutionResult'), ref('MultipleStatementsResponse')] },
            queryHeaders,
          ),
          '400': jsonResponse(
            'Invalid JSON, a wrong field type, missing required fields, no statements, params with several statements, ' +
              'an unsupported statement (COPY FROM STDIN), or a database error: SQL error, authentication failed (28xxx), ' +
              'unknown database (3D000), a failure on the parallel read path, or a transaction the script left open.',
            { oneOf: [ref('ErrorMessage'), ...databaseFailures] },
            queryHeadersOfBadRequest,
          ),
          '403': jsonResponse(
            "The target is not in ALLOWED_TARGETS: {error: 'Target not allowed'}.",
            ref('ErrorMessage'),
            queryHeaders,
          ),
          '409': jsonResponse(
            'Serialization failure or deadlock (40001, 40P01); the request may be retried.',
            { oneOf: databaseFailures },
            queryHeaders,
          ),
          '413': responseRef('BodyTooLarge'),
          '415': jsonResponse(
            'The request body uses an unsupported charset or content encoding.',
            ref('ErrorMessage'),
          ),
          '500': responseRef('InternalError'),
          '502': jsonResponse(
            'The target refused the connection, is unreachable, failed TLS, or is shutting down (08xxx, 57P0x).',
            { oneOf: [ref('ConnectionFailureResponse'), ...databaseFailures] },
            queryHeaders,
          ),
          '503': jsonResponse(
            'No pooled connection became free within POOL_WAIT_TIMEOUT_MS (code POOL_EXHAUSTED), or too many connections (53300).',
            { oneOf: [ref('ConnectionFailureResponse'), ...databaseFailures] },
            queryHeadersWithRetry,
          ),
          '504': jsonResponse(
            'Statement timeout (57014, e.g. after timeoutMs), or connecting took longer than the connect timeout (ETIMEDOUT).',
            { oneOf: [ref('ConnectionFailureResponse'), ...databaseFailures] },
            queryHeaders,
          ),
        },
      },
    },
    '/api/test-connection': {
      post: {
        tags: ['connection'],
        operationId: 'testConnection',
        summary: 'Check that a target accepts a login',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('ConnectionTestRequest'),
              example: { host: '127.0.0.1', port: 5432, user: 'postgres', password: 'secret' },
            },
          },
        },
        responses: {
          '200': jsonResponse('The connection succeeded.', ref('ConnectionTestSuccess')),
          '400': jsonResponse(
            'Missing or invalid fields, authentication failed (28xxx), unknown database (3D000), or invalid JSON ({error: string}).',
            { oneOf: [ref('ConnectionTestFailure'), ref('ErrorMessage')] },
          ),
          '403': jsonResponse(
            'The target is not in ALLOWED_TARGETS.',
            ref('ConnectionTestFailure'),
          ),
          '413': responseRef('BodyTooLarge'),
          '415': jsonResponse(
            'The request body uses an unsupported charset or content encoding.',
            ref('ErrorMessage'),
          ),
          '500': responseRef('InternalError'),
          '502': jsonResponse(
            'The target refused the connection, is unreachable, failed TLS, or is shutting down.',
            ref('ConnectionTestFailure'),
          ),
          '503': jsonResponse('Too many connections (53300).', ref('ConnectionTestFailure'), {
            'Retry-After': headerRef('RetryAfter'),
          }),
          '504': jsonResponse(
            'Connecting took longer than the connect timeout (ETIMEDOUT).',
            ref('ConnectionTestFailure'),
          ),
        },
      },
    },
    '/api/stats/pools': {
      get: {
        tags: ['statistics'],
        operationId: 'getPoolStatistics',
        summary: 'Statistics of every connection pool',
        security: statsSecurity,
        responses: {
          '200': jsonResponse('One element per pool.', ref('PoolStatsResponse')),
          '401': responseRef('Unauthorized'),
          '500': jsonResponse('The statistics could not be read.', ref('PoolStatsFailure')),
        },
      },
    },
    '/api/stats/cache': {
      get: {
        tags: ['statistics'],
        operationId: 'getCacheStatistics',
        summary: 'Result cache counters and the most recent entries',
        security: statsSecurity,
        responses: {
          '200': jsonResponse(
            'Counters and at most 10 entries, newest first.',
            ref('CacheStatisticsResponse'),
          ),
          '401': responseRef('Unauthorized'),
          '500': jsonResponse('The statistics could not be read.', ref('CacheStatisticsFailure')),
        },
      },
      delete: {
        tags: ['statistics'],
        operationId: 'clearCache',
        summary: 'Remove every entry from the result cache',
        security: statsSecurity,
        responses: {
          '200': jsonResponse('The cache is empty.', ref('CacheCleared')),
          '401': responseRef('Unauthorized'),
          '500': jsonResponse('The cache could not be cleared.', ref('CacheClearFailure')),
        },
      },
    },
    '/api/openapi.json': {
      get: {
        tags: ['service'],
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        responses: { '200': jsonResponse('The OpenAPI 3.1 document.', ref('OpenApiDocument')) },
      },
    },
    '/healthz': {
      get: {
        tags: ['service'],
        operationId: 'getHealth',
        summary: 'Liveness of the process',
        responses: { '200': jsonResponse('The process is alive.', ref('Health')) },
      },
    },
  },
  components: {
    schemas,
    responses: {
      Unauthorized: {
        description:
          'STATS_TOKEN is set and the request has no valid `Authorization: Bearer <token>` header.',
        headers: {
          'WWW-Authenticate': {
            description: 'Bearer realm="sqlgate statistics"',
            schema: { type: 'string' },
          },
        },
        content: { 'application/json': { schema: ref('ErrorMessage') } },
      },
      NotFound: jsonResponse(
        "Unknown path: {error: 'Not found: <METHOD> <path>'}.",
        ref('ErrorMessage'),
      ),
      MethodNotAllowed: jsonResponse(
        "A known path with another method: {error: 'Method <METHOD> not allowed on <path>'}.",
        ref('ErrorMessage'),
        { Allow: headerRef('Allow') },
      ),
      BodyTooLarge: jsonResponse(
        "The body is larger than MAX_BODY_BYTES: {error: 'Request body too large'}.",
        ref('ErrorMessage'),
      ),
      InternalError: jsonResponse(
        "An unexpected failure: {error: 'Internal server error'}; never a stack trace.",
        ref('ErrorMessage'),
      ),
    },
    headers: {
      ServerTiming: {
        description:
          'Where the time went, in milliseconds: pool wait, execution, serialisation of the body.',
        required: true,
        schema: ref('ServerTimingValue'),
        example: 'pool;dur=0.120, exec;dur=3.412, ser;dur=0.031',
      },
      RetryAfter: {
        description: 'Seconds to wait before retrying.',
        required: true,
        schema: { type: 'integer', minimum: 0 },
        example: 1,
      },
      Allow: {
        description: 'The methods the path answers.',
        required: true,
        schema: { type: 'string' },
        example: 'GET, DELETE',
      },
    },
    securitySchemes: {
      statsToken: {
        type: 'http',
        scheme: 'bearer',
        description:
          'Needed by the statistics endpoints only when the server runs with STATS_TOKEN set (off by default): ' +
          'Authorization: Bearer <STATS_TOKEN>.',
      },
    },
  },
};
