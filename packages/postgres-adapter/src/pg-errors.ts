/**
 * The one place where what pg throws becomes sqlgate's domain errors. Every server field is kept;
 * every connection failure gets a code (the system code, or one of ours when pg gives none).
 */
import {
  ConnectionError,
  DatabaseError,
  ErrorCodes,
  SERVER_ERROR_FIELDS,
  type FailedStep,
  type DatabaseErrorFields,
} from '@sqlgate/core';

/** pg-protocol's DatabaseError: an ErrorResponse from the server. */
function isServerError(
  error: unknown,
): error is Error & Record<string, unknown> & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { severity?: unknown }).severity === 'string' &&
    /^[0-9A-Z]{5}$/.test(String((error as { code?: unknown }).code))
  );
}

/**
 * The code of a failure: its own, else what its connection's state says (pg's lost-connection
 * errors carry none). Never read from a message's text.
 */
function systemCodeOf(error: unknown, connection: ConnectionState | undefined): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return connection?.ended ? 'ECONNRESET' : 'ECONNECTION';
}

/** What a failure's connection (its ServerSocket) says of itself. */
export interface ConnectionState {
  /** The socket is gone, closed by either side. */
  readonly ended: boolean;
}

/**
 * The server asked for a password and the request gave none: pg cannot answer, so this is the
 * refusal in PostgreSQL's terms, 28000, a client error (docs/decisions.md 5: 400).
 */
export function passwordRequired(): DatabaseError {
  return new DatabaseError({
    message: 'The server requires a password and none was given',
    code: '28000',
    severity: 'FATAL',
  });
}

/**
 * What may be logged of a pg error: name, message and code, never `error.client`, which holds
 * the password.
 */
export function loggable(error: unknown): Error {
  const summary = new Error(error instanceof Error ? error.message : String(error));
  summary.name = error instanceof Error ? error.name : 'Error';
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') (summary as Error & { code: string }).code = code;
  summary.stack = `${summary.name}: ${summary.message}`;
  return summary;
}

/**
 * Turns anything pg rejected with into a DatabaseError or a ConnectionError; `failedStep` is the
 * step a server error answered, `connection` the socket it happened on.
 */
export function toDomainError(
  error: unknown,
  failedStep?: FailedStep,
  connection?: ConnectionState,
): DatabaseError | ConnectionError {
  if (error instanceof DatabaseError || error instanceof ConnectionError) return error;
  if (isServerError(error)) {
    const fields: DatabaseErrorFields = { message: error.message, code: error.code };
    for (const name of SERVER_ERROR_FIELDS) {
      const value = error[name];
      if (typeof value === 'string') fields[name] = value;
    }
    return new DatabaseError(fields, { cause: error, ...(failedStep ? { failedStep } : {}) });
  }
  // Some layers hand on String(error): "Error [ERR_TLS_...]: reason". The code has its own field.
  // OpenSSL's own text names its source files: only its reason is kept.
  const message = (error instanceof Error ? error.message : String(error))
    .replace(/^\w*Error \[[A-Z_]+\]: /, '')
    .replace(/^[0-9A-F]+:error:[0-9A-F]+:SSL routines:[^:]*:([^:]+):[\s\S]*$/, 'TLS failed: $1');
  // An ErrorResponse without a SQLSTATE breaks the protocol: PostgreSQL always sends one.
  const malformedServerError =
    typeof (error as { severity?: unknown } | undefined)?.severity === 'string';
  const systemCode = malformedServerError ? 'PROTOCOL_ERROR' : systemCodeOf(error, connection);
  if (systemCode === 'PROTOCOL_ERROR') {
    const shown = malformedServerError
      ? 'The server sent an error report without a SQLSTATE'
      : message;
    return new ConnectionError(ErrorCodes.PROTOCOL_ERROR, shown, systemCode, { cause: error });
  }
  if (systemCode === 'RESULT_TOO_LARGE') {
    return new ConnectionError(ErrorCodes.RESULT_TOO_LARGE, message, systemCode, { cause: error });
  }
  if (systemCode === 'SERVER_TIMEOUT') {
    return new ConnectionError(ErrorCodes.SERVER_TIMEOUT, message, 'ETIMEDOUT', { cause: error });
  }
  const code =
    systemCode === 'ETIMEDOUT' ? ErrorCodes.CONNECT_TIMEOUT : ErrorCodes.CONNECTION_FAILED;
  return new ConnectionError(code, message || systemCode, systemCode, { cause: error });
}
