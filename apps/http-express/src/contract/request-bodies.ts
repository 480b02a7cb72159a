/**
 * Reading the request bodies (QueryRequest in docs/interface.md, docs/decisions.md 3) into the
 * typed requests core's use cases take: a target built from the documented fields only, no Unix
 * sockets, no silent coercion. Each reader throws RequestError with the 400 messages of
 * docs/interface.md; `requestOrRefusal` hands the use case that error instead, which it answers as
 * it answers every refused request.
 *
 * Each body has one validator (10.52): its schema in request-schemas.ts, compiled, checks every
 * field's type and range. Written here is only what a schema cannot say: the fields a configured
 * target makes optional, the fields a session refuses, the missing fields named all at once, text
 * and numbers that would not reach PostgreSQL as sent (sendable-values.ts), and unknown fields.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import {
  ErrorCodes,
  refuseIdleTimeout,
  RequestError,
  type CacheRequest,
  type ConnectionCheckRequest,
  type ConnectionTarget,
  type QueryOptions,
  type QueryRequest,
  type RequestOrRefusal,
  type SessionOpenRequest,
  type SessionQuery,
} from '@sqlgate/core';
import { compileShape } from './body-shape';
import { connectionTargetOf } from './connection-string';
import { configuredTargetOf, isAbsent, type ConfiguredTargets } from './configured-targets';
import {
  CancelRequestSchema,
  ConnectionTestRequestSchema,
  QueryRequestSchema,
  SessionOpenRequestSchema,
  SessionQueryRequestSchema,
} from './request-schemas';
import { invalid, refuseUnsendableName, refuseUnsendableParams } from './sendable-values';
import { unknownFieldWarnings } from './unknown-fields';

/**
 * The request `read` returns, or the RequestError it refused the body with: what a use case is
 * handed. Anything else it throws is a defect, and is thrown on.
 */
export function requestOrRefusal<T>(read: () => T): RequestOrRefusal<T> {
  try {
    return read();
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
}

type Body = Record<string, unknown>;

/** The fields of a body that name its target: a configured target stands in for all of them. */
const TARGET_FIELDS = ['host', 'port', 'user', 'password', 'database', 'sslMode'] as const;

// A body that uses a configured target is checked without the target's fields (10.48). A session's
// `idleTimeoutMs` is checked against the server's limit instead of the schema's (below).
const QUERY = compileShape(QueryRequestSchema);
const QUERY_STATEMENT = compileShape(Type.Omit(QueryRequestSchema, TARGET_FIELDS));
const CHECK_TARGET = compileShape(ConnectionTestRequestSchema);
const SESSION_TARGET = compileShape(Type.Pick(SessionOpenRequestSchema, TARGET_FIELDS));
const SESSION_STATEMENT = compileShape(SessionQueryRequestSchema);
const CANCEL_TARGET = compileShape(CancelRequestSchema);
const TARGET = compileShape(Type.Pick(QueryRequestSchema, TARGET_FIELDS));

/** The fields each schema names: anything else is unknown. */
const knownFieldsOf = (schema: TObject) => new Set(Object.keys(schema.properties));
const QUERY_FIELDS = knownFieldsOf(QueryRequestSchema);
const CONNECTION_TEST_FIELDS = knownFieldsOf(ConnectionTestRequestSchema);
const SESSION_OPEN_FIELDS = knownFieldsOf(SessionOpenRequestSchema);
const SESSION_QUERY_FIELDS = knownFieldsOf(SessionQueryRequestSchema);
const CANCEL_FIELDS = knownFieldsOf(CancelRequestSchema);

/** What a body must hold, named all at once when missing; empty text counts as missing. */
const REQUIRED_FIELDS = ['host', 'port', 'user', 'database', 'sql'] as const;
/** What a body must hold when it names no target: a session's query, a configured target's (10.48). */
const STATEMENT_REQUIRED_FIELDS = ['sql'] as const;
const TARGET_REQUIRED_FIELDS = ['host', 'port', 'user', 'database'] as const;
const CHECK_REQUIRED_FIELDS = ['host', 'port', 'user'] as const;

/** The body as an object; no body at all counts as an empty one (every required field missing). */
function bodyObject(body: unknown): Body {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('Request body must be a JSON object');
  }
  return body as Body;
}

function requireFields(fields: Body, required: readonly string[]): void {
  const missing = required.filter((name) => isAbsent(fields[name]));
  if (missing.length > 0) {
    throw new RequestError(ErrorCodes.MISSING_FIELDS, 'Missing required fields', { missing });
  }
}

/** The warnings naming the fields outside `known`; a name no text may hold is refused (10.51). */
function unknownFieldsOf(fields: Body, known: ReadonlySet<string>): string[] | undefined {
  return unknownFieldWarnings(fields, known, refuseUnsendableName);
}

/** A target built from the documented fields only: nothing else the caller sent reaches the driver. */
function targetFrom(fields: TargetFields, defaultDatabase = ''): ConnectionTarget {
  const target: ConnectionTarget = {
    host: fields.host,
    port: Number(fields.port),
    user: fields.user,
    database: fields.database || defaultDatabase,
    sslMode: fields.sslMode ?? 'prefer',
  };
  if (fields.password !== undefined) target.password = fields.password;
  return target;
}

type TargetFields = Static<typeof ConnectionTestRequestSchema>;

/**
 * A target from a body's target fields (host, port, user, password, database, sslMode), checked
 * as a body's are: text PostgreSQL cannot receive, a socket path or an over-long host, a port
 * outside 1..65535. For targets named elsewhere than in a body, such as the Neon-Connection-String
 * header (connection-string.ts), so that one set of checks decides them all.
 */
export function readTargetFields(fields: Record<string, unknown>): ConnectionTarget {
  return targetFrom(TARGET(fields));
}
type StatementFields = ReturnType<typeof QUERY_STATEMENT>;

/** The options of a statement's fields; a session's body has only some of them. */
function optionsFrom(fields: StatementFields): QueryOptions {
  const options: QueryOptions = {
    rowMode: fields.rowMode ?? 'object',
    readOnly: fields.readOnly ?? false,
    dryRun: fields.dryRun ?? false,
  };
  if (fields.params !== undefined) {
    refuseUnsendableParams(fields.params);
    options.params = fields.params;
  }
  if (fields.timeoutMs !== undefined) options.timeoutMs = fields.timeoutMs;
  if (fields.maxRows !== undefined) options.maxRows = fields.maxRows;
  if (fields.cache !== undefined) options.cache = cacheFrom(fields.cache);
  if (fields.isolationLevel !== undefined) options.isolationLevel = fields.isolationLevel;
  return options;
}

function cacheFrom(cache: NonNullable<StatementFields['cache']>): CacheRequest {
  if (typeof cache === 'boolean') return cache ? {} : false;
  const { ttlMs, swrMs } = cache;
  return {
    ...(ttlMs === undefined ? {} : { ttlMs }),
    ...(swrMs === undefined ? {} : { swrMs }),
  };
}

/**
 * Reads a POST /api/query body (and the request part of POST /api/copy). Throws `RequestError`
 * with the messages of docs/interface.md: 'Missing required fields' (with `missing`), or a
 * sentence naming the wrong field. Fields outside QueryRequestSchema are not refused: they are
 * named in `warnings`. A body that names no target runs on the default one of `targets`, when the
 * server has one (docs/decisions.md 10.48).
 */
export function readQueryBody(body: unknown, targets?: ConfiguredTargets): QueryRequest {
  const fields = bodyObject(body);
  const configured = configuredTargetOf(fields, targets);
  requireFields(fields, configured ? STATEMENT_REQUIRED_FIELDS : REQUIRED_FIELDS);
  const { target, statement } = queryFields(fields, configured);
  const request: QueryRequest = { target, sql: statement.sql, options: optionsFrom(statement) };
  const warnings = unknownFieldsOf(fields, QUERY_FIELDS);
  if (warnings) request.warnings = warnings;
  return request;
}

/** A query's target and statement; with a configured target, only the statement's are checked. */
function queryFields(
  fields: Body,
  configured: ConnectionTarget | undefined,
): { target: ConnectionTarget; statement: StatementFields } {
  if (configured) return { target: configured, statement: QUERY_STATEMENT(fields) };
  const query = QUERY(fields);
  return { target: targetFrom(query), statement: query };
}

/**
 * Reads a POST /api/test-connection body, whose database defaults to `postgres`. Unlike the other
 * bodies, no body at all is refused as one that is not an object.
 */
export function readConnectionCheckBody(
  body: unknown,
  targets?: ConfiguredTargets,
): ConnectionCheckRequest {
  if (body === undefined) throw invalid('Request body must be a JSON object');
  const fields = bodyObject(body);
  const target = targetOf(fields, targets, CHECK_TARGET, CHECK_REQUIRED_FIELDS, 'postgres');
  const warnings = unknownFieldsOf(fields, CONNECTION_TEST_FIELDS);
  return warnings ? { target, warnings } : { target };
}

/**
 * The configured target a body selects by naming none (10.48), or the one it names, whose
 * `required` fields must all be there.
 */
function targetOf(
  fields: Body,
  targets: ConfiguredTargets | undefined,
  read: (fields: Body) => TargetFields,
  required: readonly string[] = TARGET_REQUIRED_FIELDS,
  defaultDatabase?: string,
): ConnectionTarget {
  const configured = configuredTargetOf(fields, targets);
  if (configured) return configured;
  requireFields(fields, required);
  return targetFrom(read(fields), defaultDatabase);
}

/**
 * The target of a session opened with a Neon-Connection-String header (as @sqlgate/client opens
 * one): the header names it, so a body that names one too is refused rather than one of them
 * silently ignored.
 */
function targetOfHeader(fields: Body, connectionString: string): ConnectionTarget {
  const named = TARGET_FIELDS.find((name) => !isAbsent(fields[name]));
  if (named !== undefined) {
    throw invalid(
      `'${named}' cannot be sent with a Neon-Connection-String header: the header names the target`,
    );
  }
  return connectionTargetOf(connectionString);
}

/**
 * Reads a POST /api/sessions body; `maxIdleTimeoutMs` is SESSION_IDLE_TIMEOUT_MS. With a
 * Neon-Connection-String header, `connectionString`, the header names the target.
 */
export function readSessionOpenBody(
  body: unknown,
  maxIdleTimeoutMs: number,
  targets?: ConfiguredTargets,
  connectionString?: string,
): SessionOpenRequest {
  const fields = bodyObject(body);
  refuseFields(fields, REFUSED_AT_SESSION_OPEN, 'when a session opens');
  const request: SessionOpenRequest = {
    target:
      connectionString === undefined
        ? targetOf(fields, targets, SESSION_TARGET)
        : targetOfHeader(fields, connectionString),
  };
  const idleTimeoutMs = fields.idleTimeoutMs;
  if (idleTimeoutMs !== undefined && idleTimeoutMs !== null) {
    // Checked against the server's limit, not the schema's: more than it allows is refused,
    // never silently shortened.
    refuseIdleTimeout(idleTimeoutMs, maxIdleTimeoutMs);
    request.idleTimeoutMs = idleTimeoutMs;
  }
  const warnings = unknownFieldsOf(fields, SESSION_OPEN_FIELDS);
  if (warnings) request.warnings = warnings;
  return request;
}

/** Fields of a QueryRequest that a session request refuses rather than ignores, with why. */
const REFUSED_IN_SESSION: Record<string, string> = {
  ...Object.fromEntries(
    TARGET_FIELDS.map((name) => [name, 'the session decides where statements run']),
  ),
  readOnly: 'write BEGIN READ ONLY in the session instead',
  dryRun: 'write BEGIN ... ROLLBACK in the session instead',
  isolationLevel: 'write BEGIN ISOLATION LEVEL ... in the session instead',
  cache: "a session's reads may see its own uncommitted writes, so they are never cached",
};

/**
 * Fields of a query that a session's opening refuses rather than calling them unknown: each
 * belongs to the session's requests, or to a transaction the caller writes.
 */
const REFUSED_AT_SESSION_OPEN: Record<string, string> = {
  sql: 'send it to POST /api/sessions/{sessionId}/query',
  params: 'send it with the SQL to POST /api/sessions/{sessionId}/query',
  timeoutMs: 'send it with each request to POST /api/sessions/{sessionId}/query',
  maxRows: 'send it with each request to POST /api/sessions/{sessionId}/query',
  rowMode: 'send it with each request to POST /api/sessions/{sessionId}/query',
  readOnly: 'write BEGIN READ ONLY in the session instead',
  dryRun: 'write BEGIN ... ROLLBACK in the session instead',
  isolationLevel: 'write BEGIN ISOLATION LEVEL ... in the session instead',
  cache: "a session's reads are never cached",
};

/** Refuses every field of `refused` present in the body, naming them all with why. */
function refuseFields(fields: Body, refused: Record<string, string>, where: string): void {
  const present = Object.keys(refused).filter(
    (name) => Object.prototype.hasOwnProperty.call(fields, name) && fields[name] !== undefined,
  );
  if (present.length === 0) return;
  const reasons = present.map((name) => `'${name}' (${refused[name]})`).join('; ');
  throw invalid(
    `${present.length === 1 ? 'This field cannot' : 'These fields cannot'} be used ${where}: ${reasons}`,
  );
}

/** Reads a POST /api/sessions/{id}/query body: SQL text and per-request options, no target. */
export function readSessionQueryBody(body: unknown): SessionQuery {
  const fields = bodyObject(body);
  refuseFields(fields, REFUSED_IN_SESSION, 'in a session');
  requireFields(fields, STATEMENT_REQUIRED_FIELDS);
  const statement = SESSION_STATEMENT(fields);
  const { sql } = statement;
  const options = optionsFrom(statement);
  const warnings = unknownFieldsOf(fields, SESSION_QUERY_FIELDS);
  return warnings ? { sql, options, warnings } : { sql, options };
}

/** Reads a POST /api/requests/{id}/cancel body: the login of the request to cancel. */
export function readCancelBody(
  body: unknown,
  targets?: ConfiguredTargets,
): { target: ConnectionTarget; warnings?: string[] } {
  const fields = bodyObject(body);
  const target = targetOf(fields, targets, CANCEL_TARGET);
  const warnings = unknownFieldsOf(fields, CANCEL_FIELDS);
  return warnings ? { target, warnings } : { target };
}
