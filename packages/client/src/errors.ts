/**
 * What a failed call throws. A PostgreSQL error keeps every field the server showed, under the
 * names node-postgres and the Neon driver use, so an ORM reads `error.code` as it does from them.
 */

/** The fields of a PostgreSQL error, as POST /sql answers them (null where absent). */
export const ERROR_FIELDS = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
] as const;

type ErrorField = (typeof ERROR_FIELDS)[number];

/**
 * A failure sqlgate answered: a PostgreSQL error (400, `code` its SQLSTATE), a request sqlgate
 * refused (`code` sqlgate's own, such as `INVALID_REQUEST`, or with a key or token `UNAUTHORIZED`
 * 401, `FORBIDDEN` 403, `RATE_LIMITED` 429), or sqlgate's own failure (`status` 503…).
 */
export class SqlgateError extends Error implements Partial<Record<ErrorField, string>> {
  /** The HTTP status of sqlgate's answer; undefined when no answer came (`cause` says why). */
  status: number | undefined;
  /** The seconds to wait before trying again, from the answer's Retry-After (429, 503). */
  retryAfterSeconds?: number;
  severity?: string;
  code?: string;
  detail?: string;
  hint?: string;
  position?: string;
  internalPosition?: string;
  internalQuery?: string;
  where?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  constraint?: string;
  file?: string;
  line?: string;
  routine?: string;

  constructor(message: string, status: number | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SqlgateError';
    this.status = status;
  }
}

/**
 * The error of an answer with status `status`, body `body` (JSON, or text when it is not) and
 * Retry-After `retryAfter` (sqlgate sends it in seconds).
 */
export function errorOfAnswer(
  status: number,
  body: unknown,
  retryAfter?: string | null,
): SqlgateError {
  const error = errorOfBody(status, body);
  if (retryAfter && /^\d+$/.test(retryAfter)) error.retryAfterSeconds = Number(retryAfter);
  return error;
}

function errorOfBody(status: number, body: unknown): SqlgateError {
  if (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { message?: unknown }).message === 'string'
  ) {
    const fields = body as Record<string, unknown>;
    const error = new SqlgateError(fields.message as string, status);
    for (const name of ERROR_FIELDS) {
      const value = fields[name];
      if (typeof value === 'string' && value !== '') error[name] = value;
    }
    return error;
  }
  // sqlgate's own answers outside POST /sql (opening a session): {error, code}.
  if (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { error?: unknown }).error === 'string'
  ) {
    const { error: message, code } = body as { error: string; code?: unknown };
    const error = new SqlgateError(message, status);
    if (typeof code === 'string') error.code = code;
    return error;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new SqlgateError(`sqlgate answered ${status}: ${text.slice(0, 500)}`, status);
}
