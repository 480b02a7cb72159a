/**
 * The request bodies (docs/interface.md, QueryRequest; docs/decisions.md 3): what the OpenAPI
 * document shows, and what request-bodies.ts compiles to check a body's fields (10.52). A
 * `default` is documentation of what absence means, never a requirement: every field outside
 * `required` is `Type.Optional`.
 *
 * A schema with an `$id` is a named component: the OpenAPI generator refers to it by that name.
 */
import { Type, type Static } from '@sinclair/typebox';
import { OneOf, StringEnum } from './schema-builders';

const MAX_INT4 = 2147483647;

export const PortSchema = OneOf(
  [
    Type.Integer({ minimum: 1, maximum: 65535 }),
    // 1 to 65535 as a pattern; leading zeros are read leniently (body-shape.ts).
    Type.String({
      pattern:
        '^([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$',
    }),
  ],
  {
    $id: 'Port',
    description: 'Database server port: an integer, or a string of digits, from 1 to 65535.',
  },
);

export const SslModeSchema = StringEnum(['disable', 'require', 'prefer', 'verify-full'] as const, {
  $id: 'SslMode',
  default: 'prefer',
  description:
    'disable: plain. require: TLS without certificate verification. prefer (default): TLS without verification, ' +
    'plain when the server refuses TLS. verify-full: TLS with certificate and host name verification.',
});

/** A connection the server holds (CONFIG_FILE), named in place of the target's fields. */
export const ConnectionNameSchema = Type.String({
  pattern: '^[A-Za-z0-9_.-]{1,63}$',
  description:
    'A connection the server holds (CONFIG_FILE), in place of host, port, user, password, database and sslMode; ' +
    'the request must send an API key or a token that may use it (Authorization: Bearer).',
});

/** Where to connect and as whom: the same fields in both request bodies. */
const targetFields = {
  connection: Type.Optional(ConnectionNameSchema),
  host: Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[^/]',
    description:
      'Database server host name or IP address. A Unix socket path (starting with /) is refused.',
  }),
  port: PortSchema,
  user: Type.String({ minLength: 1, description: 'Database user name.' }),
  sslMode: Type.Optional(SslModeSchema),
};

/** The object form of a request's `cache`: a misspelt option is refused, not ignored. */
export const CacheOptionsSchema = Type.Object(
  {
    ttlMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_INT4,
        description: 'Milliseconds the cached result is fresh.',
      }),
    ),
    swrMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_INT4,
        description:
          'Milliseconds after ttlMs during which a stale result is still served (cacheStatus "stale") ' +
          'while one refresh runs in the background.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const QueryRequestSchema = Type.Object(
  {
    ...targetFields,
    password: Type.Optional(
      Type.String({
        description:
          'Database password. When absent no password is sent (trust authentication); the service never uses its own ' +
          'credentials.',
      }),
    ),
    database: Type.String({ minLength: 1, description: 'Database name.' }),
    sql: Type.String({
      minLength: 1,
      description:
        'One or more SQL statements separated by semicolons (at most MAX_STATEMENTS, 10000 by default). Text yielding ' +
        'no statement is answered with 400 "No valid SQL statements found".',
    }),
    params: Type.Optional(
      Type.Array(Type.Unknown(), {
        // The Bind message counts parameters in 16 bits: more would wrap around.
        maxItems: 65_535,
        description: 'Values bound to $1..$n. Only with exactly one statement, otherwise 400.',
      }),
    ),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_INT4,
        description:
          'Statement timeout for this request in milliseconds; exceeding it cancels the statement in the database ' +
          '(SQLSTATE 57014, status 504).',
      }),
    ),
    maxRows: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description:
          'Rows returned per statement (default MAX_ROWS, 10000). When more rows exist, the first maxRows are returned ' +
          'with truncated: true and truncatedBy: rows.',
      }),
    ),
    rowMode: Type.Optional(
      StringEnum(['object', 'array'] as const, {
        default: 'object',
        description:
          'object: rows keyed by column name. array: rows as arrays in column order (no loss when two columns share a name).',
      }),
    ),
    readOnly: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Run every statement in a READ ONLY transaction; writes fail with SQLSTATE 25006.',
      }),
    ),
    cache: Type.Optional(
      OneOf([Type.Boolean(), CacheOptionsSchema], {
        description:
          'Whether a read statement may be served from, and stored in, the result cache. true: with the server TTL ' +
          '(QUERY_CACHE_TTL_MS); {ttlMs, swrMs}: with this TTL, then stale-while-revalidate for swrMs; false: never. Absent: the server default (QUERY_CACHE_DEFAULT).',
      }),
    ),
    isolationLevel: Type.Optional(
      StringEnum(['read committed', 'repeatable read', 'serializable'] as const, {
        default: 'read committed',
        description:
          'Isolation level of the transaction the service opens (matched case-insensitively).',
      }),
    ),
    dryRun: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Run the statements in one transaction and roll it back at the end: results are returned, the database keeps ' +
          'nothing (the response says rolledBack: true).',
      }),
    ),
  },
  {
    description:
      'Body of POST /api/query: where to connect, as whom, and the SQL text. A field that is null is treated as ' +
      'absent; an empty string counts as missing for the required fields. Unknown fields never reach the database ' +
      'driver; the request still runs and the response names each of them in `warnings`.',
  },
);

/** A POST /api/query body as a client writes it. */
export type QueryRequestBody = Static<typeof QueryRequestSchema>;

export const ConnectionTestRequestSchema = Type.Object(
  {
    ...targetFields,
    password: Type.Optional(
      Type.String({ description: 'Database password. When absent no password is sent.' }),
    ),
    database: Type.Optional(
      Type.String({ default: 'postgres', description: 'Database name; postgres when omitted.' }),
    ),
  },
  {
    description:
      'Body of POST /api/test-connection. One connection is opened outside the pools; connecting gives up after ' +
      'CONNECT_TIMEOUT_MS (configurable, 5000 ms by default). Unknown fields are ignored and named in `warnings`.',
  },
);

/** A POST /api/test-connection body as a client writes it. */
export type ConnectionTestRequestBody = Static<typeof ConnectionTestRequestSchema>;

/** The multipart body of POST /api/copy: its two parts, in this order. */
export const CopyRequestSchema = Type.Object(
  {
    request: Type.String({
      description:
        'A POST /api/query body as JSON (connection fields, timeoutMs...) whose sql is one COPY ... FROM STDIN.',
    }),
    data: Type.String({
      format: 'binary',
      description: 'The COPY data, in the format the COPY names.',
    }),
  },
  { description: 'multipart/form-data: the request part first, then the data part.' },
);

const sessionTargetFields = {
  ...targetFields,
  password: Type.Optional(
    Type.String({ description: 'Database password. When absent no password is sent.' }),
  ),
  database: Type.String({ minLength: 1, description: 'Database name.' }),
};

export const SessionOpenRequestSchema = Type.Object(
  {
    ...sessionTargetFields,
    idleTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_INT4,
        description:
          'End the session after this long without a request; at most SESSION_IDLE_TIMEOUT_MS (60000 by default), ' +
          'which also applies when absent.',
      }),
    ),
  },
  {
    description:
      'Body of POST /api/sessions: the connection fields of a QueryRequest. The session holds one pooled connection ' +
      'until it is closed or expires. Unknown fields are ignored and named in `warnings`.',
  },
);

export const SessionQueryRequestSchema = Type.Object(
  {
    sql: QueryRequestSchema.properties.sql,
    params: QueryRequestSchema.properties.params,
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_INT4,
        description:
          'Milliseconds a statement may run before sqlgate cancels it (57014, answered 504). The session itself is ' +
          "untouched: its own statement_timeout stays the caller's.",
      }),
    ),
    maxRows: QueryRequestSchema.properties.maxRows,
    rowMode: QueryRequestSchema.properties.rowMode,
  },
  {
    description:
      "Body of POST /api/sessions/{sessionId}/query: a QueryRequest's sql and its per-request options. The " +
      'statements run in order on the session connection exactly as written: the caller writes BEGIN and COMMIT. ' +
      'Connection fields, readOnly, dryRun, isolationLevel and cache are refused (400): the session decides the ' +
      'first, and the others would need a transaction or a cache of their own. Unknown fields are named in `warnings`.',
  },
);

export const CancelRequestSchema = Type.Object(
  {
    ...sessionTargetFields,
  },
  {
    description:
      'Body of POST /api/requests/{requestId}/cancel: the connection fields of the request to cancel. Only a caller ' +
      'who presents the same host, port, user, database and password may cancel it.',
  },
);
