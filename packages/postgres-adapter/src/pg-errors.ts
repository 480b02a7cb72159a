/**
 * The one place where what pg throws becomes sqlgate's domain errors. Every server field is kept;
 * every connection failure gets a code (the system code, or one of ours when pg gives none).
 */
import { ConnectionError, DatabaseError, ErrorCodes, type DatabaseErrorFields, type SqlgateError } from '@sqlgate/core';

const SERVER_FIELD_NAMES = [
  'severity',
  'routine',
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
] as const;

/** pg-protocol's DatabaseError: an ErrorResponse from the server. */
function isServerError(error: unknown): error is Error & Record<string, unknown> & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { severity?: unknown }).severity === 'string' &&
    /^[0-9A-Z]{5}$/.test((error as unknown as { code: string }).code)
  );
}

/** Messages pg uses for failures that carry no code of their own. */
const MESSAGE_CODES: readonly [RegExp, string][] = [
  [/connection timeout|timeout expired/i, 'ETIMEDOUT'],
  [/does not support SSL/i, 'SSL_NOT_SUPPORTED'],
  [/Connection terminated/i, 'ECONNRESET'],
  [/not queryable/i, 'ECONNRESET'],
];

function systemCodeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== '') return code;
  const message = error instanceof Error ? error.message : String(error);
  return MESSAGE_CODES.find(([pattern]) => pattern.test(message))?.[1] ?? 'ECONNECTION';
}

/** Turns anything pg rejected with into a DatabaseError or a ConnectionError. */
export function toDomainError(error: unknown): SqlgateError {
  if (error instanceof DatabaseError || error instanceof ConnectionError) return error;
  if (isServerError(error)) {
    const fields: DatabaseErrorFields = { message: error.message, code: error.code };
    for (const name of SERVER_FIELD_NAMES) {
      const value = error[name];
      if (typeof value === 'string') fields[name] = value;
    }
    return new DatabaseError(fields, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  const systemCode = systemCodeOf(error);
  const code = systemCode === 'ETIMEDOUT' ? ErrorCodes.CONNECT_TIMEOUT : ErrorCodes.CONNECTION_FAILED;
  return new ConnectionError(code, message || systemCode, systemCode, { cause: error });
}
