/**
 * The HTTP contract as data: every route with its request schema and its responses by status. The
 * Express adapter answers exactly these routes and builds its OpenAPI document from this table, so a
 * route cannot exist without a schema (docs/interface.md).
 */
import type { TSchema } from '@sinclair/typebox';
import {
  CancelRequestSchema,
  ConnectionTestRequestSchema,
  CopyRequestSchema,
  QueryRequestSchema,
  SessionOpenRequestSchema,
  SessionQueryRequestSchema,
} from './request-schemas';
import { CancelledSchema, SessionClosedSchema, SessionOpenedSchema } from './session-bodies';
import {
  ConnectionFailureResponseSchema,
  ErrorMessageSchema,
  MultipleStatementsFailureSchema,
  MultipleStatementsResponseSchema,
  QueryErrorResponseSchema,
  QueryExecutionResultSchema,
  StreamLineSchema,
  TransactionFailureResponseSchema,
} from './responses';
import {
  CacheClearedSchema,
  CacheClearFailureSchema,
  CacheStatisticsFailureSchema,
  CacheStatisticsResponseSchema,
  ConnectionTestFailureSchema,
  ConnectionTestSuccessSchema,
  HealthSchema,
  MetricsExpositionSchema,
  OpenApiDocumentSchema,
  PoolStatsFailureSchema,
  PoolStatsResponseSchema,
  ServerTimingValueSchema,
} from './service-bodies';
import { QUERY_EXAMPLES } from './examples';
import {
  NeonBatchResultSchema,
  NeonBatchSchema,
  NeonErrorSchema,
  NeonQuerySchema,
  NeonResultSchema,
} from './neon-bodies';
import { OneOf } from './schema-builders';

export type HttpMethod = 'get' | 'post' | 'delete';

/** Headers a response can carry; each is described once in RESPONSE_HEADERS. */
export type HeaderName = 'Server-Timing' | 'Retry-After' | 'Allow' | 'WWW-Authenticate';

/** Responses shared by several routes (and by the paths no route answers). */
export type SharedResponseName =
  | 'Unauthorized'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'BodyTooLarge'
  | 'UnsupportedMediaType'
  | 'UnsupportedTransferCoding'
  | 'BodyTimeout'
  | 'BrowserRefused'
  | 'InternalError';

export interface ResponseSpec {
  description: string;
  /** The body: one schema, or several of which exactly one matches. */
  body: TSchema | readonly TSchema[];
  headers?: readonly HeaderName[];
  /** Headers that may be absent, with the reason. */
  optionalHeaders?: Partial<Record<HeaderName, string>>;
  /** Other media types of the same answer, chosen by the request's Accept header. */
  otherContent?: Record<string, TSchema | Record<string, unknown>>;
  /** The body's media type. Absent: application/json. */
  mediaType?: string;
}

export interface RouteSpec {
  method: HttpMethod;
  /** OpenAPI's form: `{name}` is a path parameter (a string of URL-safe characters). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'query' | 'sessions' | 'connection' | 'statistics' | 'service';
  /** The statistics endpoints: open, or behind a bearer token when STATS_TOKEN is set. */
  statsToken?: boolean;
  request?: {
    schema: TSchema;
    examples?: Record<string, { summary: string; value: unknown }>;
    /**
     * Absent: application/json, read before the handler runs. Otherwise the handler reads the
     * body itself; the range of every type: JSON whatever type it declares (POST /sql).
     */
    mediaType?: 'multipart/form-data' | '*/*';
  };
  responses: Record<string, ResponseSpec | SharedResponseName>;
}

export interface HeaderSpec {
  description: string;
  required?: boolean;
  schema: TSchema | Record<string, unknown>;
  example?: unknown;
}

export const RESPONSE_HEADERS: Record<HeaderName, HeaderSpec> = {
  'Server-Timing': {
    description:
      'Where the time went, in milliseconds: pool wait, execution, serialisation of the body.',
    required: true,
    schema: ServerTimingValueSchema,
    example: 'pool;dur=0.120, exec;dur=3.412, ser;dur=0.031',
  },
  'Retry-After': {
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
  'WWW-Authenticate': {
    description: 'Bearer realm="sqlgate statistics"',
    schema: { type: 'string' },
  },
};

const json = (
  description: string,
  body: TSchema | readonly TSchema[],
  headers?: readonly HeaderName[],
): ResponseSpec => (headers ? { description, body, headers } : { description, body });

export const SHARED_RESPONSES: Record<SharedResponseName, ResponseSpec> = {
  Unauthorized: json(
    'STATS_TOKEN (statistics) or METRICS_TOKEN (/metrics) is set and the request has no valid ' +
      '`Authorization: Bearer <token>` header.',
    ErrorMessageSchema,
    ['WWW-Authenticate'],
  ),
  NotFound: json("Unknown path: {error: 'Not found: <METHOD> <path>'}.", ErrorMessageSchema),
  MethodNotAllowed: json(
    "A known path with another method: {error: 'Method <METHOD> not allowed on <path>'}.",
    ErrorMessageSchema,
    ['Allow'],
  ),
  BodyTooLarge: json(
    "The body is larger than MAX_BODY_BYTES: {error: 'Request body too large'}.",
    ErrorMessageSchema,
  ),
  UnsupportedMediaType: json(
    'The body is not `Content-Type: application/json` in UTF-8, or is compressed. Web pages can send other ' +
      'types without a CORS preflight, so sqlgate refuses them.',
    ErrorMessageSchema,
  ),
  UnsupportedTransferCoding: json(
    'The body was sent with a Transfer-Encoding other than chunked (gzip, deflate...): {error}.',
    ErrorMessageSchema,
  ),
  BodyTimeout: json(
    'The body did not arrive within BODY_TIMEOUT_MS; the connection is closed.',
    ErrorMessageSchema,
  ),
  BrowserRefused: json(
    "The request carries an Origin that is neither sqlgate's own nor in CORS_ORIGINS (`Origin: null` included), " +
      'or, on a server listening on loopback (or with ALLOWED_HOSTS set), a Host that is not a loopback name nor in ' +
      'ALLOWED_HOSTS: {error: "Origin \'...\' is not allowed"} or {error: "Host \'...\' is not allowed"}.',
    ErrorMessageSchema,
  ),
  InternalError: json(
    "An unexpected failure: {error: 'Internal server error'}; never a stack trace.",
    ErrorMessageSchema,
  ),
};

/** Bodies a database failure can produce; the SQLSTATE decides the status. */
const databaseFailures = [
  QueryErrorResponseSchema,
  TransactionFailureResponseSchema,
  MultipleStatementsFailureSchema,
];
const connectionOrDatabase = [ConnectionFailureResponseSchema, ...databaseFailures];
/** Bodies of a 409: a conflict PostgreSQL reported, or a cancelled request (any shape it had). */
const conflictOrCancelled = [
  ErrorMessageSchema,
  ...databaseFailures,
  ConnectionFailureResponseSchema,
];
const timed: readonly HeaderName[] = ['Server-Timing'];

const statsRoute = (
  method: HttpMethod,
  path: string,
  operationId: string,
  summary: string,
  ok: ResponseSpec,
  failure: ResponseSpec,
): RouteSpec => ({
  method,
  path,
  operationId,
  summary,
  tag: 'statistics',
  statsToken: true,
  responses: { '200': ok, '401': 'Unauthorized', '403': 'BrowserRefused', '500': failure },
});

/** Every route the app answers. */
export const ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/api/query',
    operationId: 'executeQuery',
    summary: 'Run one or more SQL statements',
    description:
      'One statement runs directly (autocommit) and answers with a QueryExecutionResult. Several statements answer ' +
      'with a MultipleStatementsResponse: reads only run in parallel, each in a READ ONLY transaction; scripts with ' +
      'transaction control run as written; statements that cannot run in a transaction run in order in autocommit; ' +
      'anything else is wrapped in one transaction (BEGIN, COMMIT, ROLLBACK on failure). Every answer after the body ' +
      'was read names unknown request fields in `warnings`.',
    tag: 'query',
    request: { schema: QueryRequestSchema, examples: QUERY_EXAMPLES },
    responses: {
      '200': {
        description:
          'Every statement succeeded; or, with Accept: application/x-ndjson or text/csv, the answer streamed as ' +
          'rows arrive (NDJSON: one StreamLine per line, the last one `done`; CSV: one statement, RFC 4180, a header ' +
          'row, NULL empty and the empty string as ""). A streamed answer that fails after it began reports it ' +
          'in-band (NDJSON) or is cut (CSV); one that fails before is answered as JSON with its status. A request ' +
          'whose only statement is COPY ... TO STDOUT is answered with the COPY data (text/plain, text/csv or ' +
          'application/octet-stream by its format).',
        body: [QueryExecutionResultSchema, MultipleStatementsResponseSchema],
        headers: timed,
        otherContent: {
          'application/x-ndjson': StreamLineSchema,
          'text/csv': { type: 'string' },
          'text/plain': { type: 'string', description: 'COPY ... TO STDOUT data, text format.' },
          'application/octet-stream': {
            type: 'string',
            format: 'binary',
            description: 'COPY ... TO STDOUT data, binary format.',
          },
        },
      },
      '400': {
        description:
          'Invalid JSON, a wrong field type, missing required fields, no statements, unterminated SQL text, a NUL ' +
          'character, params with several statements or nested too deep, an unsupported statement (COPY FROM ' +
          'STDIN), or a database error: SQL error, authentication failed (28xxx), unknown database (3D000), a ' +
          'failure on the parallel read path, or a transaction the script left open.',
        body: [ErrorMessageSchema, ...databaseFailures],
        optionalHeaders: {
          'Server-Timing':
            'As on every other answer of this operation; absent when the body was not valid JSON.',
        },
      },
      '403': json(
        "The target is not in ALLOWED_TARGETS: {error: 'Target not allowed'}; or the request came from a web " +
          'page of another origin, or named a Host refused by the DNS-rebinding check (see the BrowserRefused response).',
        ErrorMessageSchema,
      ),
      '408': 'BodyTimeout',
      '409': json(
        'Serialization failure or deadlock (40001, 40P01); the request may be retried. Or the request was ' +
          'cancelled (POST /api/requests/{requestId}/cancel): `cancelled: true`, with the error of the statement ' +
          'it stopped, or {error, code: REQUEST_CANCELLED} when no statement had started.',
        conflictOrCancelled,
        timed,
      ),
      '413': 'BodyTooLarge',
      '415': 'UnsupportedMediaType',
      '422': json(
        'The target hands each transaction to whichever server connection is free (a transaction pooler, such as ' +
          'PgBouncer in transaction mode), or is a pooler not shown to keep one server connection per client ' +
          'connection, and a statement leaves state for later transactions (SET, a temporary table, a session ' +
          'advisory lock, LISTEN, PREPARE): {error, code: TRANSACTION_POOLING, statementIndex}; nothing was run.',
        ErrorMessageSchema,
      ),
      '500': 'InternalError',
      '501': 'UnsupportedTransferCoding',
      '502': json(
        'The target refused the connection, is unreachable, failed TLS, or is shutting down (08xxx, 57P0x); or, ' +
          'for a statement that leaves state for later transactions, refused a connection of the probe that ' +
          'finds out whether it is a transaction pooler (nothing was run).',
        connectionOrDatabase,
        timed,
      ),
      '503': json(
        'No pooled connection became free within POOL_WAIT_TIMEOUT_MS (code POOL_EXHAUSTED), or too many connections (53300).',
        connectionOrDatabase,
        ['Server-Timing', 'Retry-After'],
      ),
      '504': json(
        'Statement timeout (57014, e.g. after timeoutMs), or connecting took longer than CONNECT_TIMEOUT_MS ' +
          '(ETIMEDOUT); or, for a statement that leaves state for later transactions, the probe that finds out ' +
          'whether the target is a transaction pooler got no answer in time (ETIMEDOUT; nothing was run).',
        connectionOrDatabase,
        timed,
      ),
      '507': json(
        'A COPY ... TO STDOUT line larger than MAX_RESULT_BYTES, or that MAX_RESULT_BYTES_TOTAL, held by other ' +
          'answers, could not hold, before any of its data was sent (code RESULT_TOO_LARGE); the COPY was stopped.',
        connectionOrDatabase,
        timed,
      ),
    },
  },
  {
    method: 'post',
    path: '/sql',
    operationId: 'neonQuery',
    summary: "Run a statement or a batch as Neon's serverless driver asks (Neon-compatible)",
    description:
      "The wire of Neon's HTTP endpoint, so that `@neondatabase/serverless` (`neonConfig.fetchEndpoint`) and the " +
      'ORMs built on it work unchanged: the target in the `Neon-Connection-String` header (a libpq URI), values as ' +
      "PostgreSQL's text with `Neon-Raw-Text-Output: true`, rows as arrays with `Neon-Array-Mode: true`. " +
      '`{query, params}` is one statement; `{queries: [...]}` runs in one transaction (Neon-Batch-Isolation-Level, ' +
      '-Read-Only, -Deferrable). The same service as POST /api/query runs it: target policy, pools, limits, cancel.',
    tag: 'query',
    request: { schema: OneOf([NeonQuerySchema, NeonBatchSchema]), mediaType: '*/*' },
    responses: {
      '200': json(
        "The statement's result, or a batch's results.",
        [NeonResultSchema, NeonBatchResultSchema],
        timed,
      ),
      '400': json(
        'A PostgreSQL error (every field sqlgate shows), or a request sqlgate refused: a bad header, body or ' +
          'connection string, several statements in one query.',
        NeonErrorSchema,
      ),
      '403': json(
        "The target is not allowed (NeonError); a browser's Origin or Host refused ({error}, as on every path).",
        [NeonErrorSchema, ErrorMessageSchema],
      ),
      '413': json('The body is larger than MAX_BODY_BYTES.', NeonErrorSchema),
      '500': json('An unexpected failure; never a stack trace.', NeonErrorSchema),
      '502': json('The target refused the connection or the connection was lost.', NeonErrorSchema),
      '503': json('No pooled connection became free.', NeonErrorSchema, ['Retry-After']),
      '504': json('Connecting timed out.', NeonErrorSchema),
      '507': json(
        'The result is larger than MAX_RESULT_BYTES (code RESULT_TOO_LARGE): no rows are dropped silently.',
        NeonErrorSchema,
      ),
    },
  },
  {
    method: 'post',
    path: '/api/copy',
    operationId: 'copyFrom',
    summary: 'Load data with COPY ... FROM STDIN, streamed',
    description:
      'multipart/form-data: first a `request` part holding a POST /api/query body (connection fields, timeoutMs...) ' +
      'whose sql is one COPY ... FROM STDIN statement, then a `data` part streamed into PostgreSQL as it arrives, at ' +
      "most MAX_COPY_BYTES (10 GiB by default). COPY is all or nothing: a bad row fails it with PostgreSQL's error, " +
      'whose `where` names the input line, and nothing is loaded. A client that disconnects fails the COPY.',
    tag: 'query',
    request: { schema: CopyRequestSchema, mediaType: 'multipart/form-data' },
    responses: {
      '200': json(
        'The data was loaded: command COPY and rowCount.',
        QueryExecutionResultSchema,
        timed,
      ),
      '400': {
        description:
          'The parts are not a request part followed by a data part, the request part is invalid or its sql is not ' +
          'one COPY ... FROM STDIN, or PostgreSQL refused the data (a bad row: `where` names its line).',
        body: [ErrorMessageSchema, ...databaseFailures],
      },
      '403': 'BrowserRefused',
      '409': json(
        'The request was cancelled (POST /api/requests/{requestId}/cancel): `cancelled: true`; nothing was loaded.',
        conflictOrCancelled,
      ),
      '413': json('The data part is larger than MAX_COPY_BYTES.', ErrorMessageSchema),
      '415': json('The body is not multipart/form-data, or is compressed.', ErrorMessageSchema),
      '500': 'InternalError',
      '501': 'UnsupportedTransferCoding',
      '502': json(
        'The target refused the connection or the connection was lost.',
        connectionOrDatabase,
      ),
      '503': json(
        'No connection became free, or too many connections (53300).',
        connectionOrDatabase,
        ['Retry-After'],
      ),
      '504': json(
        'Connecting timed out, or statement_timeout (timeoutMs) ended the COPY.',
        connectionOrDatabase,
      ),
    },
  },
  {
    method: 'post',
    path: '/api/sessions',
    operationId: 'openSession',
    summary: 'Open a session: one pooled connection kept for the requests that name it',
    description:
      "The session holds one connection of the target's pool until DELETE /api/sessions/{sessionId}, until it has " +
      'been idle for idleTimeoutMs (SESSION_IDLE_TIMEOUT_MS, 60 s by default), or until SESSION_MAX_LIFETIME_MS ' +
      '(15 min by default); it then rolls back what is open and cleans the connection (DISCARD ALL). A session lives ' +
      'in the instance that opened it: route its requests there by session id.',
    tag: 'sessions',
    request: {
      schema: SessionOpenRequestSchema,
      examples: {
        local: {
          summary: 'A session on a local server, idle for at most 30 s',
          value: {
            host: '127.0.0.1',
            port: 5432,
            user: 'postgres',
            password: 'secret',
            database: 'postgres',
            idleTimeoutMs: 30000,
          },
        },
      },
    },
    responses: {
      '201': json('The session is open.', SessionOpenedSchema),
      '400': {
        description:
          'Missing or invalid fields (idleTimeoutMs above SESSION_IDLE_TIMEOUT_MS), authentication failed (28xxx), ' +
          'unknown database (3D000).',
        body: [ErrorMessageSchema, QueryErrorResponseSchema],
      },
      '403': json(
        'The target is not in ALLOWED_TARGETS, or the BrowserRefused cases.',
        ErrorMessageSchema,
      ),
      '408': 'BodyTimeout',
      '413': 'BodyTooLarge',
      '415': 'UnsupportedMediaType',
      '422': json(
        'The target hands each transaction to whichever server connection is free (a transaction pooler, such as ' +
          'PgBouncer in transaction mode), or is a pooler not shown to keep one server connection per client ' +
          'connection, where a session cannot keep its state: {error, code: TRANSACTION_POOLING}; no session was ' +
          'opened.',
        ErrorMessageSchema,
      ),
      '500': 'InternalError',
      '502': json(
        'The target refused the connection, is unreachable, failed TLS, or is shutting down, or refused a ' +
          'connection of the probe that finds out whether it is a transaction pooler.',
        connectionOrDatabase,
      ),
      '501': json(
        'This instance opens no sessions: MAX_SESSIONS is 0, or POOL_MAX is 1 (code SESSIONS_OFF); or the ' +
          'body was sent with a Transfer-Encoding other than chunked.',
        ErrorMessageSchema,
      ),
      '503': json(
        'MAX_SESSIONS sessions are open, or POOL_MAX - 1 sessions hold connections of this pool (code ' +
          'SESSION_LIMIT), or the service is shutting down (SHUTTING_DOWN), or no pooled connection became free ' +
          '(POOL_EXHAUSTED), or too many connections (53300).',
        [ErrorMessageSchema, ...connectionOrDatabase],
        ['Retry-After'],
      ),
      '409': json(
        'The request was cancelled while it waited for its connection (POST /api/requests/{requestId}/cancel): ' +
          '{error, code: REQUEST_CANCELLED}; no session was opened.',
        ErrorMessageSchema,
      ),
      '504': json(
        'Connecting took longer than CONNECT_TIMEOUT_MS, or the probe that finds out whether the target is a ' +
          'transaction pooler got no answer in time (ETIMEDOUT; no session was opened).',
        connectionOrDatabase,
      ),
    },
  },
  {
    method: 'post',
    path: '/api/sessions/{sessionId}/query',
    operationId: 'executeSessionQuery',
    summary: 'Run SQL in a session, exactly as written',
    description:
      'The statements run in order on the session connection, stopping at the first failure; nothing is wrapped in a ' +
      'transaction and nothing is rolled back: the caller writes BEGIN and COMMIT, over as many requests as it likes. ' +
      'The answer is that of POST /api/query (JSON only, never cached), with `session` saying whether the session is ' +
      'still open and its transaction status. One request at a time per session.',
    tag: 'sessions',
    request: { schema: SessionQueryRequestSchema },
    responses: {
      '200': json(
        'Every statement succeeded.',
        [QueryExecutionResultSchema, MultipleStatementsResponseSchema],
        timed,
      ),
      '400': {
        description:
          'Invalid body (connection fields, readOnly, dryRun, isolationLevel or cache are refused), no statements, or a ' +
          'database error.',
        body: [ErrorMessageSchema, ...databaseFailures],
        optionalHeaders: {
          'Server-Timing': 'Absent when the body was not valid JSON or the session was not found.',
        },
      },
      '403': 'BrowserRefused',
      '404': json(
        'No open session has this id (code SESSION_NOT_FOUND): closed, expired, or opened by another instance.',
        ErrorMessageSchema,
        timed,
      ),
      '408': 'BodyTimeout',
      '409': json(
        'Another request runs in the session (SESSION_BUSY); the request was cancelled (`cancelled: true`: by ' +
          'DELETE /api/sessions/{sessionId}/query, a cancel by request id, or the session ending); or a ' +
          'serialization failure or deadlock (40001, 40P01).',
        conflictOrCancelled,
        timed,
      ),
      '413': 'BodyTooLarge',
      '415': 'UnsupportedMediaType',
      '500': 'InternalError',
      '501': 'UnsupportedTransferCoding',
      '502': json(
        'The connection was lost or the server is shutting down (08xxx, 57P0x): the session is closed.',
        connectionOrDatabase,
        timed,
      ),
      '504': json(
        'A statement ran longer than timeoutMs and was cancelled (57014), or the server fell silent: the session is ' +
          'closed then.',
        connectionOrDatabase,
        timed,
      ),
    },
  },
  {
    method: 'delete',
    path: '/api/sessions/{sessionId}/query',
    operationId: 'cancelSessionQuery',
    summary: 'Cancel what runs in a session',
    description:
      'Sends PostgreSQL a CancelRequest for the statement running in the session; the request running there answers ' +
      'REQUEST_CANCELLED (409) and the session stays open (a transaction in it is failed: ROLLBACK it).',
    tag: 'sessions',
    responses: {
      '200': json('The running statement was sent a cancel.', CancelledSchema),
      '403': 'BrowserRefused',
      '404': json(
        'No open session has this id (SESSION_NOT_FOUND), or nothing runs in it (REQUEST_NOT_FOUND).',
        ErrorMessageSchema,
      ),
    },
  },
  {
    method: 'delete',
    path: '/api/sessions/{sessionId}',
    operationId: 'closeSession',
    summary: 'Close a session',
    description:
      'What runs in the session is cancelled, an open transaction rolled back, the connection cleaned (DISCARD ALL) ' +
      'and given back to its pool.',
    tag: 'sessions',
    responses: {
      '200': json('The session is closed.', SessionClosedSchema),
      '403': 'BrowserRefused',
      '404': json('No open session has this id (SESSION_NOT_FOUND).', ErrorMessageSchema),
    },
  },
  {
    method: 'post',
    path: '/api/requests/{requestId}/cancel',
    operationId: 'cancelRequest',
    summary: 'Cancel a running request by its X-Request-Id',
    description:
      'Cancels the statements still running for the request that carries this X-Request-Id (send your own id with ' +
      'the request to know it in advance; an id sqlgate made up cancels a request once its answer has started ' +
      'streaming, since a JSON answer arrives whole); the statements after them are not sent, and that request answers ' +
      'REQUEST_CANCELLED (409). Only a caller presenting the same host, port, user, database and password may cancel ' +
      'it. A cancel that cancels nothing is answered 404 whatever the reason, 100 ms after its body arrived; after 5 ' +
      'of them a request can no longer be cancelled by id, and a client whose cancels failed 10 times lately waits ' +
      '(429). Requests of this instance (of every worker of WORKERS=n).',
    tag: 'query',
    request: { schema: CancelRequestSchema },
    responses: {
      '200': json('A CancelRequest was sent for the running statements.', CancelledSchema),
      '400': json('Missing or invalid fields.', ErrorMessageSchema),
      '403': 'BrowserRefused',
      '404': json(
        'Nothing was cancelled (REQUEST_NOT_FOUND): no request with this id runs for this login, or it failed 5 ' +
          'cancels and can no longer be cancelled by id. The same answer for each, so that a password cannot be ' +
          'guessed from it.',
        ErrorMessageSchema,
      ),
      '408': 'BodyTimeout',
      '413': 'BodyTooLarge',
      '415': 'UnsupportedMediaType',
      '429': json(
        "This client's cancels cancelled nothing 10 times lately (CANCEL_LIMITED): it is given one more every 6 s, " +
          'and its cancels are not tried meanwhile.',
        ErrorMessageSchema,
        ['Retry-After'],
      ),
      '500': 'InternalError',
      '501': 'UnsupportedTransferCoding',
    },
  },
  {
    method: 'post',
    path: '/api/test-connection',
    operationId: 'testConnection',
    summary: 'Check that a target accepts a login',
    tag: 'connection',
    request: {
      schema: ConnectionTestRequestSchema,
      examples: {
        local: {
          summary: 'A local server',
          value: { host: '127.0.0.1', port: 5432, user: 'postgres', password: 'secret' },
        },
      },
    },
    responses: {
      '200': json('The connection succeeded.', ConnectionTestSuccessSchema),
      '400': json(
        'Missing or invalid fields, authentication failed (28xxx), unknown database (3D000), or invalid JSON ({error: string}).',
        [ConnectionTestFailureSchema, ErrorMessageSchema],
      ),
      '403': json(
        'The target is not in ALLOWED_TARGETS ({success: false, error}); or the request came from a web page of ' +
          'another origin, or named a refused Host ({error: string}).',
        [ConnectionTestFailureSchema, ErrorMessageSchema],
      ),
      '408': 'BodyTimeout',
      '413': 'BodyTooLarge',
      '415': 'UnsupportedMediaType',
      '500': 'InternalError',
      '501': 'UnsupportedTransferCoding',
      '502': json(
        'The target refused the connection, is unreachable, failed TLS, or is shutting down.',
        ConnectionTestFailureSchema,
      ),
      '503': json('Too many connections (53300).', ConnectionTestFailureSchema, ['Retry-After']),
      '504': json(
        'Connecting took longer than CONNECT_TIMEOUT_MS (ETIMEDOUT).',
        ConnectionTestFailureSchema,
      ),
    },
  },
  statsRoute(
    'get',
    '/api/stats/pools',
    'getPoolStatistics',
    'Statistics of every connection pool',
    json('One element per pool.', PoolStatsResponseSchema),
    json('The statistics could not be read.', PoolStatsFailureSchema),
  ),
  statsRoute(
    'get',
    '/api/stats/cache',
    'getCacheStatistics',
    'Result cache counters and the most recent entries',
    json('Counters and at most 10 entries, newest first.', CacheStatisticsResponseSchema),
    json('The statistics could not be read.', CacheStatisticsFailureSchema),
  ),
  statsRoute(
    'delete',
    '/api/stats/cache',
    'clearCache',
    'Remove every entry from the result cache',
    json('The cache is empty.', CacheClearedSchema),
    json('The cache could not be cleared.', CacheClearFailureSchema),
  ),
  {
    method: 'get',
    path: '/api/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI document',
    tag: 'service',
    responses: {
      '200': json('The OpenAPI 3.1 document.', OpenApiDocumentSchema),
      '403': 'BrowserRefused',
    },
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      "The Prometheus text exposition of sqlgate's metrics and the process's (README, " +
      'Monitoring). Behind `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set; ' +
      'absent (404) with METRICS=off.',
    tag: 'statistics',
    responses: {
      '200': {
        description: 'Every metric, in the Prometheus text format 0.0.4.',
        body: MetricsExpositionSchema,
        mediaType: 'text/plain; version=0.0.4',
      },
      '401': 'Unauthorized',
      '403': 'BrowserRefused',
      '404': json('METRICS=off.', ErrorMessageSchema),
    },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'getHealth',
    summary: 'Liveness of the process',
    description:
      'Answers 200 while the process serves requests, with `status: degraded` while the Redis of ' +
      'the result cache does not answer: a load balancer must keep an instance that still serves ' +
      'every request uncached (docs/decisions.md 10.40).',
    tag: 'service',
    responses: {
      '200': json('The process serves requests.', HealthSchema),
      '403': 'BrowserRefused',
    },
  },
];

/** The methods each path answers, upper case, for 405 answers with Allow. */
export function allowedMethodsByPath(routes: readonly RouteSpec[] = ROUTES): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? [];
    methods.push(route.method.toUpperCase());
    byPath.set(route.path, methods);
  }
  return byPath;
}

/** A path parameter: one path segment, as Express matches `:name`. */
const PATH_PARAMETER = '[^/]+';

/** The route paths of the table, each with the pattern of the request paths it answers. */
function templatesOf(routes: readonly RouteSpec[]): { path: string; pattern: RegExp }[] {
  const paths = [...new Set(routes.map((route) => route.path))];
  return paths.map((path) => ({
    path,
    pattern: new RegExp(
      `^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z]+\}/g, PATH_PARAMETER)}$`,
      'i',
    ),
  }));
}

const TEMPLATES = templatesOf(ROUTES);

/**
 * The route path (`/api/sessions/{sessionId}`) a request path (`/api/sessions/abc`) belongs to, or
 * undefined. Matched as Express matches: without regard to case or a trailing slash.
 */
export function routePathOf(requestPath: string): string | undefined {
  const path = requestPath.length > 1 ? requestPath.replace(/\/$/, '') : requestPath;
  return TEMPLATES.find((template) => template.pattern.test(path))?.path;
}

/** `/api/sessions/{sessionId}` as Express writes it: `/api/sessions/:sessionId`. */
export function expressPathOf(routePath: string): string {
  return routePath.replace(/\{([A-Za-z]+)\}/g, ':$1');
}
