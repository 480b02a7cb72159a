/**
 * The connection form's values and the request body they make. Every field of a POST /api/query
 * body has a place in the form; the SQL comes from the editor. Pure: no DOM.
 */
export const SSL_MODES = ['prefer', 'disable', 'require', 'verify-full'] as const;
export const ISOLATION_LEVELS = ['read committed', 'repeatable read', 'serializable'] as const;
export const ROW_MODES = ['object', 'array'] as const;
/**
 * How the console gets in: the database's own credentials in each request, or a key or JWT with
 * the name of a connection the server holds (docs/access.md).
 */
export const LOGIN_METHODS = ['credentials', 'key'] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];

/** Rows a statement may return in the console when the form leaves `maxRows` empty. */
export const CONSOLE_DEFAULT_MAX_ROWS = 100_000;

/** The form as text, as the inputs hold it. */
export interface ConnectionForm {
  name: string;
  /** A LoginMethod: which of the two groups below the requests use. */
  login: string;
  host: string;
  port: string;
  user: string;
  password: string;
  rememberPassword: boolean;
  database: string;
  sslMode: string;
  /** A connection named in the server's CONFIG_FILE, for `login: 'key'`. */
  connection: string;
  /** The API key or JWT sent as `Authorization: Bearer`; never stored (storage.ts). */
  token: string;
  timeoutMs: string;
  maxRows: string;
  /** The shape of rows in a JSON export; the grid always reads arrays. */
  rowMode: string;
  readOnly: boolean;
  dryRun: boolean;
  isolationLevel: string;
  /** Empty: no cache; `on`: the server's default time to live; digits: `{ttlMs}`. */
  cache: string;
  /** A JSON array bound to $1, $2, … (one statement only). */
  params: string;
}

export function blankForm(): ConnectionForm {
  return {
    name: '',
    login: 'credentials',
    host: '127.0.0.1',
    port: '5432',
    user: 'postgres',
    password: '',
    rememberPassword: false,
    database: 'postgres',
    sslMode: 'prefer',
    connection: '',
    token: '',
    timeoutMs: '',
    maxRows: '',
    rowMode: 'object',
    readOnly: false,
    dryRun: false,
    isolationLevel: 'read committed',
    cache: '',
    params: '',
  };
}

/** A field the form cannot turn into a request, and why. */
export class FormError extends Error {
  constructor(
    readonly field: keyof ConnectionForm,
    message: string,
  ) {
    super(message);
  }
}

/** The connection a server offers the console: its default target (docs/decisions.md 10.48). */
export type OfferedConnection = Pick<
  ConnectionForm,
  'host' | 'port' | 'user' | 'database' | 'sslMode'
>;

/** Whether the form is still on the offered connection, with no password of its own. */
function onOffered(form: ConnectionForm, offered: OfferedConnection | undefined): boolean {
  if (offered === undefined || form.password !== '') return false;
  return (['host', 'port', 'user', 'database', 'sslMode'] as const).every(
    (field) => form[field].trim() === offered[field],
  );
}

/** Whether the form gets in with a key or token and a connection name. */
export function usesKey(form: ConnectionForm): boolean {
  return form.login === 'key';
}

/**
 * The connection part of a request: what /api/test-connection and the cancel endpoint take. With a
 * key or token, only the connection's name: the server holds its credentials, and a request naming
 * both a connection and a target is refused. A form still on the connection the server offers
 * names no target: the server runs the request on its default target, with the credentials it was
 * configured with.
 */
export function connectionFields(
  form: ConnectionForm,
  offered?: OfferedConnection,
): Record<string, unknown> {
  if (usesKey(form)) {
    tokenOf(form);
    return { connection: required(form, 'connection') };
  }
  if (onOffered(form, offered)) return {};
  const body: Record<string, unknown> = {
    host: required(form, 'host'),
    port: portOf(form.port),
    user: required(form, 'user'),
    database: required(form, 'database'),
    sslMode: form.sslMode,
  };
  if (form.password !== '') body.password = form.password;
  return body;
}

/**
 * The headers that carry the form's credentials: `Authorization: Bearer` with a key or token,
 * nothing with database credentials (they are in the body).
 */
export function credentialHeaders(form: ConnectionForm): Record<string, string> {
  return usesKey(form) ? { authorization: `Bearer ${tokenOf(form)}` } : {};
}

function tokenOf(form: ConnectionForm): string {
  const token = form.token.trim();
  if (token === '') throw new FormError('token', 'A key or token is required');
  return token;
}

/**
 * A POST /api/query body for `sql`. With a key or token, an empty "Max rows" sends none: the
 * credentials may cap maxRows, and asking for more than the cap is refused (docs/access.md).
 */
export function queryBody(
  form: ConnectionForm,
  sql: string,
  offered?: OfferedConnection,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...connectionFields(form, offered),
    sql,
    rowMode: 'array',
  };
  const timeoutMs = integerOf(form, 'timeoutMs', 1, 2_147_483_647);
  if (timeoutMs !== undefined) body.timeoutMs = timeoutMs;
  const maxRows =
    integerOf(form, 'maxRows', 1, 1_000_000) ??
    (usesKey(form) ? undefined : CONSOLE_DEFAULT_MAX_ROWS);
  if (maxRows !== undefined) body.maxRows = maxRows;
  if (form.readOnly) body.readOnly = true;
  if (form.dryRun) body.dryRun = true;
  if (form.isolationLevel !== 'read committed') body.isolationLevel = form.isolationLevel;
  const cache = cacheOf(form);
  if (cache !== undefined) body.cache = cache;
  const params = paramsOf(form);
  if (params !== undefined) body.params = params;
  return body;
}

/** Whether a run asks for the result cache, which only JSON answers use. */
export function usesCache(form: ConnectionForm): boolean {
  return form.cache.trim() !== '';
}

function required(
  form: ConnectionForm,
  field: 'host' | 'user' | 'database' | 'connection',
): string {
  const value = form[field].trim();
  if (value === '') throw new FormError(field, `'${field}' is required`);
  return value;
}

function portOf(text: string): number {
  const port = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || port < 1 || port > 65535) {
    throw new FormError('port', "'port' must be an integer from 1 to 65535");
  }
  return port;
}

function integerOf(
  form: ConnectionForm,
  field: 'timeoutMs' | 'maxRows',
  min: number,
  max: number,
): number | undefined {
  const text = form[field].trim();
  if (text === '') return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new FormError(field, `'${field}' must be an integer from ${min} to ${max}`);
  }
  return value;
}

function cacheOf(form: ConnectionForm): true | { ttlMs: number } | undefined {
  const text = form.cache.trim();
  if (text === '') return undefined;
  if (text === 'on') return true;
  const ttlMs = Number(text);
  if (!/^\d+$/.test(text) || ttlMs < 1) {
    throw new FormError('cache', "'cache' must be empty, 'on' or a time to live in milliseconds");
  }
  return { ttlMs };
}

function paramsOf(form: ConnectionForm): unknown[] | undefined {
  const text = form.params.trim();
  if (text === '') return undefined;
  let params: unknown;
  try {
    params = JSON.parse(text);
  } catch {
    throw new FormError('params', '\'params\' must be a JSON array such as [1, "text"]');
  }
  if (!Array.isArray(params)) {
    throw new FormError('params', '\'params\' must be a JSON array such as [1, "text"]');
  }
  return params;
}

/** `user@host:port/database`, or `connection <name>` with a key or token: where a form's runs go. */
export function connectionTarget(form: ConnectionForm): string {
  if (usesKey(form)) return `connection ${form.connection.trim()}`;
  return `${form.user}@${form.host}:${form.port}/${form.database}`;
}

/** The name a saved connection is listed and replaced under: its own name, else its target. */
export function savedName(form: ConnectionForm): string {
  return form.name.trim() || connectionTarget(form);
}

/**
 * How the console names where a run goes (header, history): always the target, after the name
 * when there is one, so a saved name never hides a database edited since.
 */
export function connectionLabel(form: ConnectionForm): string {
  const name = form.name.trim();
  return name ? `${name} (${connectionTarget(form)})` : connectionTarget(form);
}
