/**
 * docs/decisions.md 10.5: a statement that commits on its own, or a COMMIT, whose connection ended
 * after it reached the server may have committed; its answer must not say that it failed. A caller
 * who believed that would run it again.
 */
import { ConnectionError, DatabaseError, ErrorCodes } from '../errors';
import type { PortFailure } from '../ports/settled';

/** A FATAL report: the server, or a pooler in between, ended the connection. */
export function isFatal(error: PortFailure): error is DatabaseError {
  if (!(error instanceof DatabaseError)) return false;
  const { severity } = error.fields;
  return severity === 'FATAL' || severity === 'PANIC';
}

/**
 * Whether `error` ended the connection after the statement reached the server: a connection
 * failure the adapter marked so, or a FATAL report (PgBouncer sends its own 08P01 while the backend
 * may still be committing).
 */
export function lostAfterSending(error: PortFailure): error is ConnectionError | DatabaseError {
  return (error instanceof ConnectionError && error.statementMayHaveRun) || isFatal(error);
}

/**
 * `error` as a failure whose outcome is unknown: `lost` says what was lost when, and the message
 * ends with the original's. A lost connection answers 502 whatever the server's code was.
 */
export function unknownOutcome(
  error: ConnectionError | DatabaseError,
  lost: string,
): ConnectionError {
  const connection = error instanceof ConnectionError;
  return new ConnectionError(
    connection ? error.code : ErrorCodes.CONNECTION_FAILED,
    `${lost} is unknown (${error.message})`,
    connection ? error.systemCode : error.sqlState,
    { cause: error, statementMayHaveRun: true, outcomeUnknown: true },
  );
}
