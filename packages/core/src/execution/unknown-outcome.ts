/**
 * docs/decisions.md 10.5: a statement that commits on its own, or a COMMIT, whose connection
 * ended after it reached the server may have committed: its answer must not say it failed.
 */
import { ConnectionError, DatabaseError, ErrorCodes } from '../errors';
import type { ParsedStatement } from '../parser/types';
import type { TransactionStatus } from '../ports/connections';
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

/**
 * A statement that commits on its own (a write outside any transaction, a COMMIT) had reached the
 * server when its connection ended: PostgreSQL may have committed it.
 */
export function withUnknownOutcome(
  error: PortFailure,
  statement: ParsedStatement,
  statusBefore: TransactionStatus,
): PortFailure {
  if (!lostAfterSending(error) || !commitsOnItsOwn(statement, statusBefore)) return error;
  return unknownOutcome(
    error,
    'The connection was lost while the statement ran; whether it committed',
  );
}

function commitsOnItsOwn(statement: ParsedStatement, statusBefore: TransactionStatus): boolean {
  const { statementClass, keyword } = statement;
  if (statementClass === 'transaction-control') {
    // COMMIT PREPARED and ROLLBACK PREPARED end a prepared transaction, inside none.
    if (SETTLES_PREPARED.test(statement.text)) return true;
    return statusBefore === 'in-transaction' && COMMITTING_KEYWORDS.has(keyword);
  }
  if (statusBefore !== 'idle') return false;
  // A read that calls a volatile or unknown function (a function of the caller's that inserts)
  // may write as well: without the catalog, it is not proven free of side effects (10.4).
  return (
    statementClass === 'write' ||
    statementClass === 'no-transaction' ||
    (statementClass === 'read' && statement.callsVolatileFunction)
  );
}

/** COMMIT, END and PREPARE TRANSACTION end a transaction that may commit. */
const COMMITTING_KEYWORDS = new Set(['COMMIT', 'END', 'PREPARE']);
const SETTLES_PREPARED = /^(?:COMMIT|ROLLBACK)\s+PREPARED\b/i;
