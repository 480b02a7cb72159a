/**
 * The service's error catalogue. Every error sqlgate raises has a stable `code` declared here; the
 * HTTP adapter maps codes (and, for database errors, SQLSTATEs) to status codes in one place.
 */

export const ErrorCodes = {
  /** The request body is malformed: wrong type, invalid value, unknown option combination. */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** Required fields are absent. */
  MISSING_FIELDS: 'MISSING_FIELDS',
  /** The SQL text holds no statement. */
  NO_STATEMENTS: 'NO_STATEMENTS',
  /** A statement cannot be served over HTTP (COPY ... FROM STDIN). */
  UNSUPPORTED_STATEMENT: 'UNSUPPORTED_STATEMENT',
  /** PostgreSQL answered with an error (the SQLSTATE is on the error). */
  DATABASE_ERROR: 'DATABASE_ERROR',
  /** The target could not be reached or refused the connection (also TLS failures). */
  CONNECTION_FAILED: 'CONNECTION_FAILED',
  /** Connecting to the target took longer than the connect timeout. */
  CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
  /** The server sent nothing for longer than the request's timeout allows; the connection was closed. */
  SERVER_TIMEOUT: 'SERVER_TIMEOUT',
  /** The server broke the wire protocol; the connection was closed. */
  PROTOCOL_ERROR: 'PROTOCOL_ERROR',
  /** A COPY line sqlgate could not hold (MAX_RESULT_BYTES, MAX_RESULT_BYTES_TOTAL); the connection was closed. */
  RESULT_TOO_LARGE: 'RESULT_TOO_LARGE',
  /** A defect in sqlgate: the detail goes to the log only. */
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  /** No pooled connection became free within the pool wait timeout. */
  POOL_EXHAUSTED: 'POOL_EXHAUSTED',
  /** The target is outside the configured allow-list. */
  TARGET_NOT_ALLOWED: 'TARGET_NOT_ALLOWED',
  /** A script opened a transaction and left it open; it was rolled back. */
  TRANSACTION_LEFT_OPEN: 'TRANSACTION_LEFT_OPEN',
  /** The caller went away; the work was cancelled. */
  REQUEST_ABORTED: 'REQUEST_ABORTED',
  /** POST /api/requests/{id}/cancel (or DELETE /api/sessions/{id}/query) stopped the request. */
  REQUEST_CANCELLED: 'REQUEST_CANCELLED',
  /** No open session has this id: never opened, closed, expired, or held by another instance. */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** The session is running another request; a session runs one at a time. */
  SESSION_BUSY: 'SESSION_BUSY',
  /** MAX_SESSIONS are open, or the target's pool lends as many sessions as it may. */
  SESSION_LIMIT: 'SESSION_LIMIT',
  /** This instance opens no sessions (MAX_SESSIONS 0, or pools of one connection). */
  SESSIONS_OFF: 'SESSIONS_OFF',
  /** The service is shutting down and starts nothing new. */
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  /** Nothing with this request id runs here (POST /api/requests/{id}/cancel). */
  REQUEST_NOT_FOUND: 'REQUEST_NOT_FOUND',
  /**
   * No longer answered: a cancel for another login answers REQUEST_NOT_FOUND, as one for an id
   * nothing runs under does (docs/decisions.md 10.34). Kept so that the code stays reserved.
   */
  CANCEL_REFUSED: 'CANCEL_REFUSED',
  /** The caller's cancels by request id cancelled nothing too often lately; it must wait (10.34). */
  CANCEL_LIMITED: 'CANCEL_LIMITED',
  /**
   * The target hands each transaction to whichever server connection is free (a transaction
   * pooler): a session, or a statement whose state outlives its transaction, cannot work there.
   */
  TRANSACTION_POOLING: 'TRANSACTION_POOLING',
  /**
   * The request sent no credentials, or ones the server does not know, where it needs them: an
   * API key or a JWT (docs/decisions.md 12).
   */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /**
   * The credentials are known but may not do this: a connection, statement or query their rules
   * do not allow (docs/decisions.md 12). Nothing ran.
   */
  FORBIDDEN: 'FORBIDDEN',
  /** The key or token used its rate or its concurrency; the answer says when to retry (12). */
  RATE_LIMITED: 'RATE_LIMITED',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Base class of every error sqlgate raises on purpose. */
export class SqlgateError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A request that cannot be run as sent. `body` holds extra fields for the response body
 * (for example `missing` for MISSING_FIELDS).
 */
export class RequestError extends SqlgateError {
  readonly body: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, body: Record<string, unknown> = {}) {
    super(code, message);
    this.body = body;
  }
}

/**
 * An error of the session and cancel endpoints (docs/decisions.md 10.26), whose body names its code
 * so that programs need not read the message.
 */
export function codedError(code: ErrorCode, message: string): RequestError {
  return new RequestError(code, message, { code });
}

/** Every field PostgreSQL can send with an error, as node-postgres names them. */
export interface DatabaseErrorFields {
  message: string;
  /** SQLSTATE. */
  code: string;
  severity?: string;
  routine?: string;
  detail?: string;
  hint?: string;
  /** 1-based character position within the statement text. */
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
}

/** Which part of a round trip failed: a control statement before the statement, the statement, or one after it. */
export type FailedStep = 'before' | 'statement' | 'after';

/**
 * The optional fields of a server error that a response shows. `file` and `line` (PostgreSQL's
 * own source location) are kept on the error but not shown.
 */
export const SHOWN_SERVER_ERROR_FIELDS = [
  'severity',
  'routine',
  'detail',
  'hint',
  'position',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'internalPosition',
  'internalQuery',
] as const satisfies readonly (keyof DatabaseErrorFields)[];

/** Every optional field of a server error, as pg names them. */
export const SERVER_ERROR_FIELDS = [...SHOWN_SERVER_ERROR_FIELDS, 'file', 'line'] as const;

/** PostgreSQL refused a statement. Keeps every field the server sent. */
export class DatabaseError extends SqlgateError {
  readonly fields: DatabaseErrorFields;
  /** Set when the statement ran with control statements around it (RunOptions before / after). */
  readonly failedStep: FailedStep;

  constructor(fields: DatabaseErrorFields, options?: { cause?: unknown; failedStep?: FailedStep }) {
    super(ErrorCodes.DATABASE_ERROR, fields.message, options);
    this.fields = fields;
    this.failedStep = options?.failedStep ?? 'statement';
  }

  /** The SQLSTATE, e.g. `23505`. */
  get sqlState(): string {
    return this.fields.code;
  }
}

/**
 * Talking to the target failed before or outside a statement. `systemCode` is the SQLSTATE the
 * server sent, else the system code (ECONNREFUSED...): an error without a code is a bug.
 */
export type ConnectionErrorCode =
  | typeof ErrorCodes.CONNECTION_FAILED
  | typeof ErrorCodes.CONNECT_TIMEOUT
  | typeof ErrorCodes.SERVER_TIMEOUT
  | typeof ErrorCodes.PROTOCOL_ERROR
  | typeof ErrorCodes.RESULT_TOO_LARGE
  | typeof ErrorCodes.POOL_EXHAUSTED;

export class ConnectionError extends SqlgateError {
  declare readonly code: ConnectionErrorCode;
  readonly systemCode: string;
  /**
   * The connection failed after the statement reached the server, which may have run it, and
   * committed it when it commits on its own (docs/decisions.md 10.5).
   */
  readonly statementMayHaveRun: boolean;
  /** Whether what failed committed cannot be known: the answer says so (`outcomeUnknown`). */
  readonly outcomeUnknown: boolean;

  constructor(
    code: ConnectionErrorCode,
    message: string,
    systemCode: string,
    options?: { cause?: unknown; statementMayHaveRun?: boolean; outcomeUnknown?: boolean },
  ) {
    super(code, message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.systemCode = systemCode;
    this.statementMayHaveRun = options?.statementMayHaveRun ?? false;
    this.outcomeUnknown = options?.outcomeUnknown ?? false;
  }
}
