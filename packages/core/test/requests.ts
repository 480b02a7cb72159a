/**
 * Typed requests from the plain fields the tests write, as a transport reads a body, but checking
 * nothing: these tests are of the use cases. Reading bodies, with its refusals and warnings, is
 * the HTTP app's (its contract tests).
 */
import type { ConnectionTarget, SslMode } from '../src/ports/connections';
import type {
  CacheRequest,
  IsolationLevel,
  QueryOptions,
  QueryRequest,
  SessionOpenRequest,
  SessionQuery,
} from '../src/request';

type Fields = Record<string, unknown>;

/** The target the fields name; a port may be text, and sslMode defaults to `prefer`. */
export function targetOf(fields: Fields): ConnectionTarget {
  const target: ConnectionTarget = {
    host: fields.host as string,
    port: Number(fields.port),
    user: fields.user as string,
    database: fields.database as string,
    sslMode: (fields.sslMode as SslMode | undefined) ?? 'prefer',
  };
  if (typeof fields.password === 'string') target.password = fields.password;
  return target;
}

/** A query request: the target, SQL text and options the fields name. */
export function queryRequest(fields: Fields): QueryRequest {
  return { target: targetOf(fields), ...sessionQuery(fields) };
}

/** A session's query: the SQL text and options the fields name. */
export function sessionQuery(fields: Fields): SessionQuery {
  const options: QueryOptions = {
    rowMode: fields.rowMode === 'array' ? 'array' : 'object',
    readOnly: fields.readOnly === true,
    dryRun: fields.dryRun === true,
  };
  if (fields.params !== undefined) options.params = fields.params as unknown[];
  if (fields.timeoutMs !== undefined) options.timeoutMs = fields.timeoutMs as number;
  if (fields.maxRows !== undefined) options.maxRows = fields.maxRows as number;
  if (fields.cache !== undefined) options.cache = cacheOf(fields.cache);
  if (typeof fields.isolationLevel === 'string') {
    options.isolationLevel = fields.isolationLevel.toLowerCase() as IsolationLevel;
  }
  return { sql: fields.sql as string, options };
}

function cacheOf(cache: unknown): CacheRequest {
  return cache === true ? {} : (cache as CacheRequest);
}

/** A session to open on the target the fields name, idle for `idleTimeoutMs` if they say. */
export function sessionOpenRequest(fields: Fields): SessionOpenRequest {
  const request: SessionOpenRequest = { target: targetOf(fields) };
  if (typeof fields.idleTimeoutMs === 'number') request.idleTimeoutMs = fields.idleTimeoutMs;
  return request;
}
