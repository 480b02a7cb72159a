/**
 * Reading the request bodies (QueryRequest in docs/interface.md, docs/decisions.md 3) into the
 * typed requests core's use cases take: a target built from the documented fields only, no Unix
 * sockets, no silent coercion. Each reader throws RequestError with the 400 messages of
 * docs/interface.md; `requestOrRefusal` hands the use case that error instead, which it answers as
 * it answers every refused request.
 */
import {
  ErrorCodes,
  refuseIdleTimeout,
  RequestError,
  SSL_MODES,
  type CacheRequest,
  type ConnectionCheckRequest,
  type ConnectionTarget,
  type IsolationLevel,
  type QueryOptions,
  type QueryRequest,
  type RequestOrRefusal,
  type RowMode,
  type SessionOpenRequest,
  type SessionQuery,
  type SslMode,
} from '@sqlgate/core';
import { configuredTargetOf, isAbsent, type ConfiguredTargets } from './configured-targets';
import {
  CANCEL_REQUEST_FIELDS,
  CONNECTION_TEST_FIELDS,
  QUERY_REQUEST_FIELDS,
  SESSION_OPEN_FIELDS,
  SESSION_QUERY_FIELDS,
} from './request-schemas';
import { shownFieldName, unknownFieldWarnings } from './unknown-fields';

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

const ISOLATION_LEVELS: readonly IsolationLevel[] = [
  'read committed',
  'repeatable read',
  'serializable',
];

/** The fields of QueryRequestSchema: the one list of what a body may hold. */
const KNOWN_QUERY_FIELDS: ReadonlySet<string> = new Set(QUERY_REQUEST_FIELDS);
const KNOWN_CONNECTION_TEST_FIELDS: ReadonlySet<string> = new Set(CONNECTION_TEST_FIELDS);

const REQUIRED_FIELDS = ['host', 'port', 'user', 'database', 'sql'] as const;
/** What a body must hold when it uses a configured target (docs/decisions.md 10.48). */
const REQUIRED_WITH_CONFIGURED_TARGET = ['sql'] as const;
/** Fields of a target that may hold text, all of which reach the server's startup packet. */
const TARGET_TEXT_FIELDS = ['host', 'port', 'user', 'password', 'database', 'sslMode'] as const;
/** The other text fields of a query request. */
const QUERY_TEXT_FIELDS = ['sql', 'rowMode', 'isolationLevel'] as const;

/** Upper bound of a caller's `maxRows`, so a typo cannot ask the server to buffer a table. */
export const MAX_ROWS_LIMIT = 1_000_000;
/** PostgreSQL's statement_timeout is an int4 of milliseconds. */
const MAX_TIMEOUT_MS = 2_147_483_647;

type Body = Record<string, unknown>;

/**
 * How deeply `params` values may nest (arrays and objects inside the `params` array). Deeper
 * values are a mistake or an attack, and walking them would exhaust the stack (docs/decisions.md
 * 10.8).
 */
export const MAX_PARAM_DEPTH = 32;
/** PostgreSQL's protocol limit on the parameters of one statement. */
const MAX_PARAMS = 65_535;

/** A NUL, or a UTF-16 surrogate without its partner (with the `u` flag a valid pair is one code point). */
const UNSENDABLE_CHARACTER = /[\0\p{Cs}]/u;

function invalid(message: string): RequestError {
  return new RequestError(ErrorCodes.INVALID_REQUEST, message);
}

/**
 * Refuses text that cannot reach PostgreSQL as sent (docs/decisions.md 10.12). A NUL ends a
 * string in the protocol: in a startup packet it let a caller add `options` of their own, in a
 * statement it broke the message. A lone surrogate has no UTF-8 form: the encoder would replace
 * it with U+FFFD, silently sending other text than the caller's.
 */
function refuseUnsendableText(value: string, field: string): void {
  refuseUnsendable(value, `'${field}'`, 'which PostgreSQL cannot receive');
}

/**
 * Refuses a field's name holding what no text of a request may hold, as such a value is (10.12):
 * an unknown field's name is echoed in a warning. The refusal does not show the name, since the
 * character it would echo is the problem.
 */
function refuseUnsendableName(name: string): void {
  refuseUnsendable(name, 'A field name', 'which no field of a request may hold');
}

function refuseUnsendable(value: string, subject: string, whyNotNul: string): void {
  const found = UNSENDABLE_CHARACTER.exec(value);
  if (found === null) return;
  if (found[0] === '\0')
    throw invalid(`${subject} contains a NUL character (U+0000), ${whyNotNul}`);
  const code = found[0].charCodeAt(0).toString(16).toUpperCase();
  // Counted in characters, as PostgreSQL and an editor count them, not in UTF-16 units.
  const character = Array.from(value.slice(0, found.index)).length + 1;
  throw invalid(
    `${subject} contains a lone UTF-16 surrogate (U+${code}) at character ${character}, which is not valid Unicode`,
  );
}

/** The warnings naming the fields of `fields` outside `known`; a name no text may hold is refused. */
function unknownFieldsOf(fields: Body, known: ReadonlySet<string>): string[] | undefined {
  return unknownFieldWarnings(fields, known, refuseUnsendableName);
}

/** Checks the named fields of `body` that hold strings (other types are checked field by field). */
function refuseUnsendableFields(body: Body, fields: readonly string[]): void {
  for (const field of fields) {
    const value = body[field];
    if (typeof value === 'string') refuseUnsendableText(value, field);
  }
}

/** `params[0].name`, `params[1][2]`, `params[0]["a b"]`: built only for an error message. */
function paramPath(keys: readonly (string | number)[]): string {
  let path = 'params';
  for (const key of keys) {
    if (typeof key === 'number') path += `[${key}]`;
    else path += /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return path;
}

/** Significant digits JSON numbers keep through a double without doubt (DBL_DIG). */
const EXACT_DIGITS = 15;

/**
 * Whether a parsed JSON number is surely the number the caller wrote: finite, and within 2^53 or
 * of at most 15 significant digits. Past 2^53 with more digits, it is most likely an integer that
 * JSON parsing rounded before sqlgate saw it (a bigint id), so it is refused rather than sent
 * changed: nothing the caller sent is silently changed (docs/decisions.md 10.8). The HTTP server
 * checks each number's text as well, before parsing.
 */
function isExactNumber(value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (Math.abs(value) <= 2 ** 53) return true;
  // Significant digits only: an integer's trailing zeros are not (1e20 is written with 21 digits).
  const mantissa = String(value).split('e')[0] as string;
  const digits = mantissa
    .replace(/^-?0*\.?0*/, '')
    .replace('.', '')
    .replace(/0+$/, '');
  return digits.length <= EXACT_DIGITS;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * Walks a parameter value: strings (and object keys) must be sendable, nesting is bounded. Only
 * arrays and plain objects are entered: a Buffer may hold zero bytes (bytea), and a Date or a
 * library caller's own object is the driver's to convert. `keys` is the way down from `params`,
 * kept as a stack so a long array costs no string per element.
 */
function checkParam(value: unknown, keys: (string | number)[]): void {
  if (typeof value === 'string') {
    if (UNSENDABLE_CHARACTER.test(value)) refuseUnsendableText(value, paramPath(keys));
    return;
  }
  if (typeof value === 'number') {
    if (!isExactNumber(value)) {
      throw invalid(
        `'${paramPath(keys)}' is a number JSON cannot carry exactly (it arrived as ${String(value)}); send it as a string`,
      );
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return;
  // keys holds the params index too: a value nested `depth` levels below it has depth + 1 keys.
  if (keys.length > MAX_PARAM_DEPTH) {
    throw invalid(
      `'params' are nested more than ${MAX_PARAM_DEPTH} levels deep (at '${paramPath(keys)}')`,
    );
  }
  if (isArray) {
    for (let index = 0; index < value.length; index++) {
      keys.push(index);
      checkParam(value[index], keys);
      keys.pop();
    }
    return;
  }
  for (const key of Object.keys(value)) {
    keys.push(key);
    if (UNSENDABLE_CHARACTER.test(key)) refuseUnsendableText(key, `${paramPath(keys)} (key)`);
    checkParam(value[key], keys);
    keys.pop();
  }
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

/** docs/interface.md has the port as a number; sqlgate also accepts a string of digits. */
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
  refuseUnsendableFields(body, TARGET_TEXT_FIELDS);
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
    const fields = value as Body;
    const unknown = Object.keys(fields).find((name) => name !== 'ttlMs' && name !== 'swrMs');
    // A misspelt option would otherwise be ignored and the entry kept for the server's TTL.
    if (unknown !== undefined) {
      refuseUnsendableName(unknown);
      throw invalid(
        `'cache' has an unknown field '${shownFieldName(unknown)}': it accepts ttlMs and swrMs`,
      );
    }
    const ttlMs = optionalPositiveInteger(fields, 'ttlMs', MAX_TIMEOUT_MS);
    const swrMs = optionalPositiveInteger(fields, 'swrMs', MAX_TIMEOUT_MS);
    return {
      ...(ttlMs === undefined ? {} : { ttlMs }),
      ...(swrMs === undefined ? {} : { swrMs }),
    };
  }
  throw invalid(
    '\'cache\' must be true, false or {"ttlMs": <positive integer>, "swrMs": <positive integer>}',
  );
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
  // The Bind message counts parameters in 16 bits: more would wrap around.
  if (value.length > MAX_PARAMS)
    throw invalid(`'params' holds ${value.length} values; at most ${MAX_PARAMS} are allowed`);
  const keys: (string | number)[] = [];
  for (let index = 0; index < value.length; index++) {
    keys.push(index);
    checkParam(value[index], keys);
    keys.pop();
  }
  return value;
}

/** Names of required fields that are absent, null or empty. */
export function missingFields(body: Body, required: readonly string[]): string[] {
  return required.filter((name) => isAbsent(body[name]));
}

/**
 * Reads a POST /api/query body (and the request part of POST /api/copy). Throws `RequestError`
 * with the messages of docs/interface.md: 'Missing required fields' (with `missing`), or a
 * sentence naming the wrong field. Fields outside
 * QueryRequestSchema are not refused: they are named in `warnings`. A body that names no target
 * runs on the default one of `targets`, when the server has one (docs/decisions.md 10.48).
 *
 * Hand-written rather than a validator compiled from the schema: the 400 messages are part of the
 * contract (tests assert them word for word), and this is POST /api/query's hot path. The schema
 * still decides which fields are known, and a test checks both agree on what is valid.
 */
export function readQueryBody(body: unknown, targets?: ConfiguredTargets): QueryRequest {
  const fields = bodyObject(body);
  const configured = configuredTargetOf(fields, targets);
  requireFields(fields, configured ? REQUIRED_WITH_CONFIGURED_TARGET : REQUIRED_FIELDS);
  const { sql, options } = parseStatementsAndOptions(fields);
  const target = configured ?? parseConnectionTarget(fields);
  const request: QueryRequest = { target, sql, options };
  const warnings = unknownFieldsOf(fields, KNOWN_QUERY_FIELDS);
  if (warnings) request.warnings = warnings;
  return request;
}

/** The SQL text and options of a body: the part of a QueryRequest a session request shares. */
function parseStatementsAndOptions(fields: Body): { sql: string; options: QueryOptions } {
  refuseUnsendableFields(fields, QUERY_TEXT_FIELDS);
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
  return { sql, options };
}

/** The body as an object; no body at all counts as an empty one (every required field missing). */
function bodyObject(body: unknown): Body {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('Request body must be a JSON object');
  }
  return body as Body;
}

function requireFields(fields: Body, required: readonly string[]): void {
  const missing = missingFields(fields, required);
  if (missing.length > 0) {
    throw new RequestError(ErrorCodes.MISSING_FIELDS, 'Missing required fields', { missing });
  }
}

const TARGET_REQUIRED_FIELDS = ['host', 'port', 'user', 'database'] as const;
const CHECK_REQUIRED_FIELDS = ['host', 'port', 'user'] as const;

/**
 * Reads a POST /api/test-connection body, whose database defaults to `postgres`. Unlike the other
 * bodies, no body at all is refused as one that is not an object.
 */
export function readConnectionCheckBody(
  body: unknown,
  targets?: ConfiguredTargets,
): ConnectionCheckRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('Request body must be a JSON object');
  }
  const fields = body as Body;
  const target = connectionCheckTarget(fields, targets);
  const warnings = unknownFieldsOf(fields, KNOWN_CONNECTION_TEST_FIELDS);
  return warnings ? { target, warnings } : { target };
}

function connectionCheckTarget(fields: Body, targets?: ConfiguredTargets): ConnectionTarget {
  const configured = configuredTargetOf(fields, targets);
  if (configured) return configured;
  requireFields(fields, CHECK_REQUIRED_FIELDS);
  return parseConnectionTarget(fields, { database: 'postgres' });
}

/** The target a body names, or the configured one it selects by naming none. */
function targetOf(fields: Body, targets: ConfiguredTargets | undefined): ConnectionTarget {
  const configured = configuredTargetOf(fields, targets);
  if (configured) return configured;
  requireFields(fields, TARGET_REQUIRED_FIELDS);
  return parseConnectionTarget(fields);
}
const KNOWN_SESSION_OPEN_FIELDS: ReadonlySet<string> = new Set(SESSION_OPEN_FIELDS);
const KNOWN_SESSION_QUERY_FIELDS: ReadonlySet<string> = new Set(SESSION_QUERY_FIELDS);
const KNOWN_CANCEL_FIELDS: ReadonlySet<string> = new Set(CANCEL_REQUEST_FIELDS);

/** Reads a POST /api/sessions body; `maxIdleTimeoutMs` is SESSION_IDLE_TIMEOUT_MS. */
export function readSessionOpenBody(
  body: unknown,
  maxIdleTimeoutMs: number,
  targets?: ConfiguredTargets,
): SessionOpenRequest {
  const fields = bodyObject(body);
  refuseFields(fields, REFUSED_AT_SESSION_OPEN, 'when a session opens');
  const request: SessionOpenRequest = { target: targetOf(fields, targets) };
  const idleTimeoutMs = fields.idleTimeoutMs;
  if (idleTimeoutMs !== undefined && idleTimeoutMs !== null) {
    // Asking for more than the server allows is refused, never silently shortened.
    refuseIdleTimeout(idleTimeoutMs, maxIdleTimeoutMs);
    request.idleTimeoutMs = idleTimeoutMs;
  }
  const warnings = unknownFieldsOf(fields, KNOWN_SESSION_OPEN_FIELDS);
  if (warnings) request.warnings = warnings;
  return request;
}

/** Fields of a QueryRequest that a session request refuses rather than ignores, with why. */
const REFUSED_IN_SESSION: Record<string, string> = {
  host: 'the session decides where statements run',
  port: 'the session decides where statements run',
  user: 'the session decides where statements run',
  password: 'the session decides where statements run',
  database: 'the session decides where statements run',
  sslMode: 'the session decides where statements run',
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
  requireFields(fields, ['sql']);
  const { sql, options } = parseStatementsAndOptions(fields);
  const warnings = unknownFieldsOf(fields, KNOWN_SESSION_QUERY_FIELDS);
  return warnings ? { sql, options, warnings } : { sql, options };
}

/** Reads a POST /api/requests/{id}/cancel body: the login of the request to cancel. */
export function readCancelBody(
  body: unknown,
  targets?: ConfiguredTargets,
): {
  target: ConnectionTarget;
  warnings?: string[];
} {
  const fields = bodyObject(body);
  const target = targetOf(fields, targets);
  const warnings = unknownFieldsOf(fields, KNOWN_CANCEL_FIELDS);
  return warnings ? { target, warnings } : { target };
}
