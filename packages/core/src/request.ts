/**
 * Validation of a POST /api/query body (SPEC QueryRequest plus DECISIONS.md section 3). It lives in
 * core, not in the HTTP adapter, so that library users get the same guarantees: a target built from the
 * documented fields only, no Unix sockets, no silent coercion.
 */
import { ErrorCodes, RequestError } from './errors';
import { SSL_MODES, type ConnectionTarget, type RowMode, type SslMode } from './ports/connections';

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

const ISOLATION_LEVELS: readonly IsolationLevel[] = [
  'read committed',
  'repeatable read',
  'serializable',
];

/** Per-request cache wish: off, on with the server's TTL, or on with a TTL of its own. */
export type CacheRequest = false | { ttlMs?: number };

export interface QueryOptions {
  params?: unknown[];
  timeoutMs?: number;
  maxRows?: number;
  rowMode: RowMode;
  readOnly: boolean;
  dryRun: boolean;
  /** Absent: the server's default applies. */
  cache?: CacheRequest;
  isolationLevel?: IsolationLevel;
}

export interface QueryRequest {
  target: ConnectionTarget;
  sql: string;
  options: QueryOptions;
}

const REQUIRED_FIELDS = ['host', 'port', 'user', 'database', 'sql'] as const;

/** Upper bound of a caller's `maxRows`, so a typo cannot ask the server to buffer a table. */
export const MAX_ROWS_LIMIT = 1_000_000;
/** PostgreSQL's statement_timeout is an int4 of milliseconds. */
const MAX_TIMEOUT_MS = 2_147_483_647;

type Body = Record<string, unknown>;

function invalid(message: string): RequestError {
  return new RequestError(ErrorCodes.INVALID_REQUEST, message);
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function requireString(body: Body, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw invalid(`'${name}' must be a string`);
  return value;
}

function optionalBoolean(body: Body, name: string): boolean {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`'${name}' must be a boolean`);
  return value;
}

function optionalPositiveInteger(body: Body, name: string, max: number): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(`'${name}' must be an integer from 1 to ${max}`);
  }
  return value;
}

/** SPEC sends the port as a number; DECISIONS also accepts a string of digits. */
export function parsePort(value: unknown): number {
  const port =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^[0-9]{1,5}$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalid("'port' must be an integer from 1 to 65535");
  }
  return port;
}

function parseSslMode(value: unknown): SslMode {
  if (value === undefined || value === null || value === '') return 'prefer';
  if (typeof value !== 'string' || !SSL_MODES.includes(value as SslMode)) {
    throw invalid(`'sslMode' must be one of: ${SSL_MODES.join(', ')}`);
  }
  return value as SslMode;
}

function parseHost(value: unknown): string {
  if (typeof value !== 'string') throw invalid("'host' must be a string");
  // A leading slash makes pg connect to a Unix socket of the service's own machine.
  if (value.startsWith('/'))
    throw invalid("'host' must be a host name or an IP address, not a socket path");
  if (value.length > 255) throw invalid("'host' is longer than 255 characters");
  return value;
}

/** Builds a target from the documented fields only: nothing else the caller sent reaches the driver. */
export function parseConnectionTarget(
  body: Body,
  defaults: { database?: string } = {},
): ConnectionTarget {
  const password = body.password;
  if (password !== undefined && password !== null && typeof password !== 'string') {
    throw invalid("'password' must be a string");
  }
  const database =
    isAbsent(body.database) && defaults.database
      ? defaults.database
      : requireString(body, 'database');
  const target: ConnectionTarget = {
    host: parseHost(body.host),
    port: parsePort(body.port),
    user: requireString(body, 'user'),
    database,
    sslMode: parseSslMode(body.sslMode),
  };
  if (typeof password === 'string') target.password = password;
  return target;
}

function parseCache(value: unknown): CacheRequest | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === true) return {};
  if (value === false) return false;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const ttlMs = optionalPositiveInteger(value as Body, 'ttlMs', MAX_TIMEOUT_MS);
    return ttlMs === undefined ? {} : { ttlMs };
  }
  throw invalid('\'cache\' must be true, false or {"ttlMs": <positive integer>}');
}

function parseRowMode(value: unknown): RowMode {
  if (value === undefined || value === null) return 'object';
  if (value !== 'object' && value !== 'array')
    throw invalid("'rowMode' must be 'object' or 'array'");
  return value;
}

function parseIsolationLevel(value: unknown): IsolationLevel | undefined {
  if (value === undefined || value === null) return undefined;
  const level = typeof value === 'string' ? value.toLowerCase() : value;
  if (!ISOLATION_LEVELS.includes(level as IsolationLevel)) {
    throw invalid(`'isolationLevel' must be one of: ${ISOLATION_LEVELS.join(', ')}`);
  }
  return level as IsolationLevel;
}

function parseParams(value: unknown): unknown[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalid("'params' must be an array");
  return value;
}

/** Names of required fields that are absent, null or empty. */
export function missingFields(body: Body, required: readonly string[]): string[] {
  return required.filter((name) => isAbsent(body[name]));
}

/**
 * Validates a POST /api/query body. Throws `RequestError` with SPEC's messages:
 * 'Missing required fields' (with `missing`), or a sentence naming the wrong field.
 */
export function parseQueryRequest(body: unknown): QueryRequest {
  // No body at all: every required field is missing.
  if (body === undefined) body = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('Request body must be a JSON object');
  }
  const fields = body as Body;
  const missing = missingFields(fields, REQUIRED_FIELDS);
  if (missing.length > 0) {
    throw new RequestError(ErrorCodes.MISSING_FIELDS, 'Missing required fields', { missing });
  }
  // pg would take an object as a named prepared statement: only text is SQL.
  const sql = requireString(fields, 'sql');
  const options: QueryOptions = {
    rowMode: parseRowMode(fields.rowMode),
    readOnly: optionalBoolean(fields, 'readOnly'),
    dryRun: optionalBoolean(fields, 'dryRun'),
  };
  const params = parseParams(fields.params);
  if (params) options.params = params;
  const timeoutMs = optionalPositiveInteger(fields, 'timeoutMs', MAX_TIMEOUT_MS);
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  const maxRows = optionalPositiveInteger(fields, 'maxRows', MAX_ROWS_LIMIT);
  if (maxRows !== undefined) options.maxRows = maxRows;
  const cache = parseCache(fields.cache);
  if (cache !== undefined) options.cache = cache;
  const isolationLevel = parseIsolationLevel(fields.isolationLevel);
  if (isolationLevel) options.isolationLevel = isolationLevel;
  return { target: parseConnectionTarget(fields), sql, options };
}
