/**
 * Shapes an execution outcome into the response bodies of docs/interface.md (QueryExecutionResult,
 * MultipleStatementsResponse, QueryErrorObject) with the extensions of docs/decisions.md 3 and 5.
 */
import {
  ConnectionError,
  DatabaseError,
  ErrorCodes,
  RequestError,
  SHOWN_SERVER_ERROR_FIELDS,
  SqlgateError,
  type DatabaseErrorFields,
  type ErrorCode,
} from '../errors';
import type { CacheBypassReason, CacheStatus } from '../cache/cache-status';
import type { ParsedStatement } from '../parser/types';
import type { FieldDescription, StatementResult } from '../ports/connections';
import type { PortFailure } from '../ports/settled';
import type { ExecutionFailure, ExecutionOutcome, StatementOutcome } from './outcome';
import type { ExecutionPlan } from './plan';
import { isFatal } from './unknown-outcome';
import type { ServedBy } from '../routing/replica-choice';

/** QueryErrorObject (docs/interface.md), with every field the server gave and where it points in the submitted text. */
export interface QueryErrorObject extends Omit<DatabaseErrorFields, 'file' | 'line'> {
  executionTime: number;
  /** 0-based index of the failing statement. */
  statementIndex?: number;
  /** Line and column of `position` within the submitted SQL text. */
  location?: { line: number; column: number };
}

/** QueryExecutionResult (docs/interface.md) (one per statement). */
export interface QueryExecutionResult {
  rows?: unknown[];
  fields?: FieldDescription[];
  rowCount?: number | null;
  command?: string | null;
  executionTime: number;
  statement: string;
  /** Not every row is in `rows`. */
  truncated?: boolean;
  /** Which limit cut `rows`: `maxRows` or MAX_RESULT_BYTES (docs/decisions.md 10.2). */
  truncatedBy?: 'rows' | 'bytes';
  /** Served from the result cache. */
  cached?: boolean;
  /** What the result cache did for the statement (docs/decisions.md 10.27). */
  cacheStatus?: CacheStatus['status'];
  /** Why the cache was bypassed, when `cacheStatus` is `bypass`. */
  cacheReason?: CacheBypassReason;
  /** Nothing the request did was kept (dryRun, or a transaction left open). */
  rolledBack?: boolean;
  error?: string;
  /** The failure in full, when `error` is set. */
  cause?: QueryErrorObject;
  /** On a named connection with replicas: where it ran (docs/decisions.md 13). */
  servedBy?: ServedBy;
}

/** MultipleStatementsResponse (docs/interface.md). */
export interface MultipleStatementsResponse {
  multipleResults: true;
  results: QueryExecutionResult[];
  totalExecutionTime: number;
  transactionUsed?: boolean;
  rolledBack?: boolean;
  error?: string;
  failedStatementIndex?: number;
  /** On a named connection with replicas: where it ran (docs/decisions.md 13). */
  servedBy?: ServedBy;
}

/** Body after the service's transaction failed and was rolled back (docs/interface.md, docs/decisions.md 2.5). */
export interface TransactionFailureResponse {
  error: string;
  transactionUsed: true;
  rolledBack: true;
  failedStatementIndex: number;
  results: QueryExecutionResult[];
  cause: QueryErrorObject;
  totalExecutionTime: number;
}

export type QueryResponseBody =
  | QueryExecutionResult
  | MultipleStatementsResponse
  | TransactionFailureResponse
  | {
      error: QueryErrorObject | { message: string; code: string } | string;
      [extra: string]: unknown;
    };

/** What went wrong, for the transport to choose a status code. */
export interface ResponseFailure {
  code: ErrorCode;
  /** The SQLSTATE that decides the status, when one does. */
  sqlState?: string;
  /**
   * The server (or a pooler speaking for it) ended the connection with a connection exception
   * reported FATAL: the connection was lost, whatever the SQLSTATE alone would say.
   */
  connectionEnded?: true;
  /** For INTERNAL_ERROR: what went wrong, to be logged and never sent. */
  internal?: unknown;
}

/** The answer of a request that ran SQL: a ServiceAnswer whose body is a QueryResponseBody. */
export type QueryResponse = ServiceAnswer<never>;

/** A QueryErrorObject from a database error; `statement` places the error in the submitted text. */
export function queryErrorObject(
  error: DatabaseError,
  executionTime: number,
  statement?: ParsedStatement,
): QueryErrorObject {
  const fields = error.fields;
  const body: QueryErrorObject = { message: fields.message, code: fields.code, executionTime };
  for (const name of SHOWN_SERVER_ERROR_FIELDS) {
    const value = fields[name];
    if (value !== undefined && value !== '')
      (body as unknown as Record<string, unknown>)[name] = value;
  }
  if (statement) {
    body.statementIndex = statement.index;
    const position = Number(fields.position);
    const place =
      Number.isInteger(position) && position > 0 ? statement.locate(position) : statement.start;
    body.location = { line: place.line, column: place.column };
  }
  return body;
}

/**
 * The error object of a failed statement: a QueryErrorObject for a database error, else `{message,
 * code}` with the system code or sqlgate's.
 */
function statementErrorObject(
  error: PortFailure,
  executionTime: number,
  statement: ParsedStatement,
): QueryErrorObject {
  if (error instanceof DatabaseError) return queryErrorObject(error, executionTime, statement);
  return {
    message: error.message,
    code: error instanceof ConnectionError ? error.systemCode : error.code,
    executionTime,
    statementIndex: statement.index,
    ...(error instanceof ConnectionError && error.outcomeUnknown ? UNKNOWN_OUTCOME : {}),
  };
}

/** Marks the error of a statement that may have committed (docs/decisions.md 10.5). */
const UNKNOWN_OUTCOME = { outcomeUnknown: true } as const;

/**
 * SQLSTATEs that answer by their own status on every path: a lost connection or a server going
 * away, and a statement that ran out of time (57014: the request's timeoutMs, or a cancel).
 */
function keepsOwnStatus(sqlState: string): boolean {
  return sqlState.startsWith('08') || sqlState.startsWith('57P') || sqlState === '57014';
}

/** What decides the status of a failed statement's response. */
function failureOf(error: PortFailure): ResponseFailure {
  return error instanceof DatabaseError ? databaseFailure(error) : { code: error.code };
}

/** What decides the status of a database error's response. */
function databaseFailure(error: DatabaseError): ResponseFailure {
  const failure: ResponseFailure = { code: error.code, sqlState: error.sqlState };
  if (endsConnection(error)) failure.connectionEnded = true;
  return failure;
}

/**
 * A connection exception (class 08) reported FATAL: the connection is gone. Its 08P01 is then a
 * pooler's or server's ending ("database removed"), not the caller's protocol mistake that an
 * ERROR 08P01 is. A refused login (28xxx, 3D000), FATAL too, stays the caller's.
 */
function endsConnection(error: PortFailure): error is DatabaseError {
  return isFatal(error) && error.sqlState.startsWith('08');
}

/** docs/interface.md: the executed statement text, with a terminating semicolon as in the submitted text. */
export function statementText(statement: ParsedStatement): string {
  return statement.terminated ? `${statement.text};` : statement.text;
}

/** First keywords of the statements PostgreSQL tags SELECT. */
const SELECT_KEYWORDS = new Set(['SELECT', 'VALUES', 'TABLE', 'WITH']);

/**
 * The statement's command: its tag's verb, or for a read stopped early (no tag) the verb PostgreSQL
 * would tag it with (docs/decisions.md 10.42).
 */
export function commandOf(result: StatementResult, statement: ParsedStatement): string | null {
  if (result.command !== null || !result.truncated) return result.command;
  if (SELECT_KEYWORDS.has(statement.keyword)) return 'SELECT';
  return statement.keyword === '' ? null : statement.keyword;
}

function executionResult(outcome: StatementOutcome): QueryExecutionResult {
  if (!outcome.ok) {
    return withCacheStatus(
      {
        error: outcome.error.message,
        executionTime: outcome.executionTime,
        statement: statementText(outcome.statement),
        cause: statementErrorObject(outcome.error, outcome.executionTime, outcome.statement),
      },
      outcome.cache,
    );
  }
  const { result } = outcome;
  const shaped: QueryExecutionResult = {
    rows: result.rows,
    fields: result.fields,
    rowCount: result.rowCount,
    command: commandOf(result, outcome.statement),
    executionTime: outcome.executionTime,
    statement: statementText(outcome.statement),
  };
  if (result.truncated) {
    shaped.truncated = true;
    if (result.truncatedBy) shaped.truncatedBy = result.truncatedBy;
  }
  if (outcome.cached) shaped.cached = true;
  return withCacheStatus(shaped, outcome.cache);
}

function withCacheStatus(
  shaped: QueryExecutionResult,
  cache: CacheStatus | undefined,
): QueryExecutionResult {
  if (cache === undefined) return shaped;
  shaped.cacheStatus = cache.status;
  if (cache.status === 'bypass') shaped.cacheReason = cache.reason;
  return shaped;
}

const STATEMENTS_FAILED = 'One or more statements failed';
const LEFT_OPEN = 'The script left a transaction open; it was rolled back';
const ABORTED = 'The caller went away; the statements after it were not sent';
/** The answer to a caller that went away before any statement ran (nobody reads it; the log does). */
export const ABORTED_BEFORE_START_MESSAGE = 'The request was aborted by the caller';

const CANCELLED = 'The request was cancelled; the statements after it were not sent';
const CANCELLED_BEFORE_START = 'The request was cancelled before any statement ran';

/** The answer to a request whose caller went away, or cancelled it, before any statement ran. */
function abortedBeforeStart(failure: ExecutionFailure | undefined): QueryResponse {
  if (failure?.kind === 'aborted' && failure.cancelled) {
    return {
      body: { error: CANCELLED_BEFORE_START, code: ErrorCodes.REQUEST_CANCELLED },
      failure: { code: ErrorCodes.REQUEST_CANCELLED },
    };
  }
  return {
    body: { error: ABORTED_BEFORE_START_MESSAGE },
    failure: { code: ErrorCodes.REQUEST_ABORTED },
  };
}

/** docs/interface.md: 'Transaction failed at statement: <first 100 chars>... Error: <message>'. */
export function transactionFailureMessage(statementText: string, message: string): string {
  return `Transaction failed at statement: ${statementText.substring(0, 100)}... Error: ${message}`;
}

function singleResponse(outcome: ExecutionOutcome, totalExecutionTime: number): QueryResponse {
  const failure = outcome.failure;
  if (failure?.kind === 'request') return errorResponse(failure.error, totalExecutionTime);
  if (failure?.kind === 'transaction') {
    return {
      body: { error: queryErrorObject(failure.error, failure.executionTime, failure.statement) },
      failure: databaseFailure(failure.error),
    };
  }
  const only = outcome.outcomes[0];
  if (!only) return abortedBeforeStart(failure);
  if (!only.ok) {
    return {
      body: { error: statementErrorObject(only.error, only.executionTime, only.statement) },
      failure: failureOf(only.error),
    };
  }
  const body = executionResult(only);
  if (outcome.rolledBack) body.rolledBack = true;
  return { body };
}

function transactionFailure(
  failure: Extract<ExecutionFailure, { kind: 'transaction' }>,
  results: QueryExecutionResult[],
  totalExecutionTime: number,
): QueryResponse {
  const body: TransactionFailureResponse = {
    error: transactionFailureMessage(
      failure.statement?.text ?? failure.end ?? 'COMMIT',
      failure.error.message,
    ),
    transactionUsed: true,
    rolledBack: true,
    failedStatementIndex: failure.index,
    results,
    cause: queryErrorObject(failure.error, failure.executionTime, failure.statement),
    totalExecutionTime,
  };
  return { body, failure: databaseFailure(failure.error) };
}

function multipleResponse(outcome: ExecutionOutcome, totalExecutionTime: number): QueryResponse {
  const failure = outcome.failure;
  if (failure?.kind === 'request') return errorResponse(failure.error, totalExecutionTime);
  if (failure?.kind === 'aborted' && outcome.outcomes.length === 0) {
    return abortedBeforeStart(failure);
  }
  const results = outcome.outcomes.map(executionResult);
  if (failure?.kind === 'transaction')
    return transactionFailure(failure, results, totalExecutionTime);
  const body: MultipleStatementsResponse = { multipleResults: true, results, totalExecutionTime };
  // The concurrent-read answer of docs/interface.md has no transactionUsed; every other strategy says whether it wrapped.
  if (outcome.strategy !== 'parallel-reads') body.transactionUsed = outcome.transactionUsed;
  if (outcome.rolledBack) body.rolledBack = true;
  if (failure?.kind === 'statement') {
    body.error = STATEMENTS_FAILED;
    body.failedStatementIndex = failure.index;
    const failed = outcome.outcomes[failure.index];
    // docs/decisions.md 5: a database error on the parallel path is a 400 whatever its SQLSTATE;
    // a lost connection answers by its own code everywhere, as do parameters that could not be sent.
    if (failed && !failed.ok && !(failed.error instanceof DatabaseError)) {
      return { body, failure: failureOf(failed.error) };
    }
    // A report that ended the connection is a lost connection, as everywhere.
    if (failed && !failed.ok && endsConnection(failed.error)) {
      return { body, failure: databaseFailure(failed.error) };
    }
    const failedState =
      failed && !failed.ok && failed.error instanceof DatabaseError
        ? failed.error.sqlState
        : undefined;
    // The connection itself went (57P01, 08006...), or time ran out: answered by that, as everywhere.
    const sqlState =
      outcome.strategy === 'parallel-reads' && failedState && !keepsOwnStatus(failedState)
        ? undefined
        : failedState;
    return {
      body,
      failure: { code: ErrorCodes.DATABASE_ERROR, ...(sqlState ? { sqlState } : {}) },
    };
  }
  if (failure?.kind === 'aborted') {
    body.error = failure.cancelled ? CANCELLED : ABORTED;
    const code = failure.cancelled ? ErrorCodes.REQUEST_CANCELLED : ErrorCodes.REQUEST_ABORTED;
    return { body, failure: { code } };
  }
  if (failure?.kind === 'left-open') {
    body.error = LEFT_OPEN;
    return { body, failure: { code: ErrorCodes.TRANSACTION_LEFT_OPEN } };
  }
  return { body };
}

/** The response for a request that ran. */
export function shapeResponse(
  plan: ExecutionPlan,
  outcome: ExecutionOutcome,
  totalExecutionTime: number,
): QueryResponse {
  return plan.shape === 'single'
    ? singleResponse(outcome, totalExecutionTime)
    : multipleResponse(outcome, totalExecutionTime);
}

/**
 * The response for a request that could not run; anything unexpected is a defect: a 500 that says
 * nothing of it (docs/decisions.md 10.8), the error in `failure.internal` for the log.
 */
export function errorResponse(error: unknown, executionTime: number): QueryResponse {
  if (error instanceof RequestError) {
    return { body: { error: error.message, ...error.body }, failure: { code: error.code } };
  }
  if (error instanceof DatabaseError) {
    return {
      body: { error: queryErrorObject(error, executionTime) },
      failure: databaseFailure(error),
    };
  }
  if (error instanceof ConnectionError) {
    return {
      body: {
        error: {
          message: error.message,
          code: error.systemCode,
          ...(error.outcomeUnknown ? UNKNOWN_OUTCOME : {}),
        },
      },
      failure: { code: error.code },
    };
  }
  if (error instanceof SqlgateError && error.code !== ErrorCodes.INTERNAL_ERROR) {
    return { body: { error: error.message }, failure: { code: error.code } };
  }
  return {
    body: { error: INTERNAL_ERROR_MESSAGE },
    failure: { code: ErrorCodes.INTERNAL_ERROR, internal: error },
  };
}

/**
 * A warning for each statement whose columns share a name, in object rows (docs/decisions.md
 * 10.42): a row keeps one value per name, the last column's, as pg does; arrays keep every column.
 */
export function duplicateColumnWarnings(outcome: ExecutionOutcome): string[] {
  const warnings: string[] = [];
  for (const each of outcome.outcomes) {
    if (!each.ok || each.result.fields.length < 2) continue;
    const seen = new Set<string>();
    const repeated = new Set<string>();
    for (const { name } of each.result.fields) (seen.has(name) ? repeated : seen).add(name);
    if (repeated.size === 0) continue;
    const names = [...repeated].map((name) => JSON.stringify(name)).join(', ');
    warnings.push(
      `Statement ${each.statement.index} returns more than one column named ${names}: each object ` +
        `row holds only the last column of a name; send rowMode: 'array' to receive every column`,
    );
  }
  return warnings;
}

/** The only thing a caller learns of a defect; the request id leads to the log line. */
export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

/** An answer of the session and cancel use cases: a body, and why it failed when it did. */
export interface ServiceAnswer<T> {
  body: T | QueryResponseBody;
  /** Absent on success. */
  failure?: ResponseFailure;
}

/**
 * Adds the unknown request fields to the body, on success and failure alike (a misspelled
 * `maxRows` matters most when the answer surprises); none when validation failed.
 */
export function withWarnings<T extends { body: QueryResponseBody }>(
  response: T,
  warnings: string[] | undefined,
): T {
  if (warnings) response.body = { ...response.body, warnings } as QueryResponseBody;
  return response;
}
