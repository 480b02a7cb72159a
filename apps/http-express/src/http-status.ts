/**
 * The one mapping from sqlgate's error codes and SQLSTATEs to HTTP status codes (docs/decisions.md
 * 5). A database's answer is never a 500.
 */
import { ErrorCodes, type ErrorCode, type ResponseFailure } from '@sqlgate/core';

function statusForSqlState(sqlState: string): number {
  if (sqlState === '40001' || sqlState === '40P01') return 409; // the caller may retry
  if (sqlState === '57014') return 504; // statement timeout; not 408, which clients retry on their own
  if (sqlState === '53300') return 503; // too many connections
  // Protocol violation: the request's own mistake (a wrong number of params), docs/decisions.md 10.8.
  if (sqlState === '08P01') return 400;
  if (sqlState.startsWith('08') || sqlState.startsWith('57P')) return 502; // connection lost, server shutting down
  return 400; // syntax, constraint, permission, authentication (28xxx), unknown database (3D000)...
}

/**
 * The status of every error code: a code added to ErrorCodes without one here fails to compile,
 * so no failure falls back to a status nobody chose.
 */
const STATUS_BY_CODE = {
  [ErrorCodes.INVALID_REQUEST]: 400,
  [ErrorCodes.MISSING_FIELDS]: 400,
  [ErrorCodes.NO_STATEMENTS]: 400,
  [ErrorCodes.UNSUPPORTED_STATEMENT]: 400,
  // A database error without a SQLSTATE; with one, the SQLSTATE decides (statusForSqlState).
  [ErrorCodes.DATABASE_ERROR]: 400,
  [ErrorCodes.TRANSACTION_LEFT_OPEN]: 400,
  // Nobody reads it: the caller is gone. The request log records 499.
  [ErrorCodes.REQUEST_ABORTED]: 499,
  [ErrorCodes.TARGET_NOT_ALLOWED]: 403,
  [ErrorCodes.CONNECTION_FAILED]: 502,
  [ErrorCodes.PROTOCOL_ERROR]: 502,
  // sqlgate could not hold the answer (a COPY line): retrying may help only once others are done.
  [ErrorCodes.RESULT_TOO_LARGE]: 507,
  [ErrorCodes.SERVER_TIMEOUT]: 504,
  [ErrorCodes.INTERNAL_ERROR]: 500,
  [ErrorCodes.POOL_EXHAUSTED]: 503,
  [ErrorCodes.CONNECT_TIMEOUT]: 504,
  // docs/decisions.md 10.26.
  [ErrorCodes.REQUEST_CANCELLED]: 409,
  [ErrorCodes.SESSION_BUSY]: 409,
  [ErrorCodes.SESSION_NOT_FOUND]: 404,
  [ErrorCodes.REQUEST_NOT_FOUND]: 404,
  // Reserved and never answered: a cancel for another login answers as REQUEST_NOT_FOUND does
  // (docs/decisions.md 10.34).
  [ErrorCodes.CANCEL_REFUSED]: 404,
  // Too many failed cancels from one client lately (docs/decisions.md 10.34).
  [ErrorCodes.CANCEL_LIMITED]: 429,
  [ErrorCodes.SESSION_LIMIT]: 503,
  // Permanent for this instance: retrying does not help, so no 503 and no Retry-After.
  [ErrorCodes.SESSIONS_OFF]: 501,
  [ErrorCodes.SHUTTING_DOWN]: 503,
  // Understood, but not servable through this target: retrying never helps, the SQL or the
  // target must change; neither sqlgate nor the server failed (docs/decisions.md 10.33).
  [ErrorCodes.TRANSACTION_POOLING]: 422,
  // docs/decisions.md 12: unknown or missing credentials, rules that refuse, a limit reached.
  [ErrorCodes.UNAUTHORIZED]: 401,
  [ErrorCodes.FORBIDDEN]: 403,
  [ErrorCodes.RATE_LIMITED]: 429,
} as const satisfies Record<ErrorCode, number>;

/** 200 when nothing failed. */
export function httpStatusFor(failure: ResponseFailure | undefined): number {
  if (!failure) return 200;
  // A report that ended the connection (FATAL) is a lost connection whatever its SQLSTATE: a
  // pooler's 08P01 "database removed" is not the caller's protocol mistake.
  if (failure.connectionEnded) return 502;
  if (failure.code === ErrorCodes.DATABASE_ERROR && failure.sqlState) {
    return statusForSqlState(failure.sqlState);
  }
  return STATUS_BY_CODE[failure.code];
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;
