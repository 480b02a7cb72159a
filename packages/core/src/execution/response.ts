/**
 * Shapes an execution outcome into SPEC's response bodies (QueryExecutionResult,
 * MultipleStatementsResponse, QueryErrorObject) with the extensions of DECISIONS.md sections 3 and 5.
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
import type { ParsedStatement } from '../parser/types';
import type { FieldDescription } from '../ports/connections';
import type { ExecutionFailure, ExecutionOutcome, StatementOutcome } from './outcome';
import type { ExecutionPlan } from './plan';

/** SPEC QueryErrorObject, with every field the server gave and where it points in the submitted text. */
export interface QueryErrorObject extends Omit<DatabaseErrorFields, 'file' | 'line'> {
  executionTime: number;
  /** 0-based index of the failing statement. */
  statementIndex?: number;
  /** Line and column of `position` within the submitted SQL text. */
  location?: { line: number; column: number };
}

/** SPEC QueryExecutionResult (one per statement). */
export interface QueryExecutionResult {
  rows?: unknown[];
  fields?: FieldDescription[];
  rowCount?: number | null;
  command?: string | null;
  executionTime: number;
  statement: string;
  /** More rows existed than `maxRows`. */
  truncated?: boolean;
  /** Served from the result cache. */
  cached?: boolean;
  /** Nothing the request did was kept (dryRun, or a transaction left open). */
  rolledBack?: boolean;
  error?: string;
  /** The failure in full, when `error` is set. */
  cause?: QueryErrorObject;
}

/** SPEC MultipleStatementsResponse. */
export interface MultipleStatementsResponse {
  multipleResults: true;
  results: QueryExecutionResult[];
  totalExecutionTime: number;
  transactionUsed?: boolean;
  rolledBack?: boolean;
  error?: string;
  failedStatementIndex?: number;
}

/** Body after the service's transaction failed and was rolled back (SPEC Errors, DECISIONS 2.5). */
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
}

export interface QueryResponse {
  body: QueryResponseBody;
  /** Absent on success. */
  failure?: ResponseFailure;
}

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

/** SPEC: the executed statement text, with a terminating semicolon as in the submitted text. */
function statementText(statement: ParsedStatement): string {
  return statement.terminated ? `${statement.text};` : statement.text;
}

function executionResult(outcome: StatementOutcome): QueryExecutionResult {
  if (!outcome.ok) {
    return {
      error: outcome.error.message,
      executionTime: outcome.executionTime,
      statement: statementText(outcome.statement),
      cause: queryErrorObject(outcome.error, outcome.executionTime, outcome.statement),
    };
  }
  const { result } = outcome;
  const shaped: QueryExecutionResult = {
    rows: result.rows,
    fields: result.fields,
    rowCount: result.rowCount,
    command: result.command,
    executionTime: outcome.executionTime,
    statement: statementText(outcome.statement),
  };
  if (result.truncated) shaped.truncated = true;
  if (outcome.cached) shaped.cached = true;
  return shaped;
}

const STATEMENTS_FAILED = 'One or more statements failed';
const LEFT_OPEN = 'The script left a transaction open; it was rolled back';

/** SPEC: 'Transaction failed at statement: <first 100 chars>... Error: <message>'. */
export function transactionFailureMessage(statementText: string, message: string): string {
  return `Transaction failed at statement: ${statementText.substring(0, 100)}... Error: ${message}`;
}

function singleResponse(outcome: ExecutionOutcome): QueryResponse {
  const failure = outcome.failure;
  if (failure?.kind === 'transaction') {
    return {
      body: { error: queryErrorObject(failure.error, failure.executionTime, failure.statement) },
      failure: { code: ErrorCodes.DATABASE_ERROR, sqlState: failure.error.sqlState },
    };
  }
  const only = outcome.outcomes[0] as StatementOutcome;
  if (!only.ok) {
    return {
      body: { error: queryErrorObject(only.error, only.executionTime, only.statement) },
      failure: { code: ErrorCodes.DATABASE_ERROR, sqlState: only.error.sqlState },
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
    error: transactionFailureMessage(failure.statement?.text ?? 'COMMIT', failure.error.message),
    transactionUsed: true,
    rolledBack: true,
    failedStatementIndex: failure.index,
    results,
    cause: queryErrorObject(failure.error, failure.executionTime, failure.statement),
    totalExecutionTime,
  };
  return { body, failure: { code: ErrorCodes.DATABASE_ERROR, sqlState: failure.error.sqlState } };
}

function multipleResponse(outcome: ExecutionOutcome, totalExecutionTime: number): QueryResponse {
  const results = outcome.outcomes.map(executionResult);
  const failure = outcome.failure;
  if (failure?.kind === 'transaction')
    return transactionFailure(failure, results, totalExecutionTime);
  const body: MultipleStatementsResponse = { multipleResults: true, results, totalExecutionTime };
  // SPEC's concurrent-read sample has no transactionUsed; every other strategy says whether it wrapped.
  if (outcome.strategy !== 'parallel-reads') body.transactionUsed = outcome.transactionUsed;
  if (outcome.rolledBack) body.rolledBack = true;
  if (failure?.kind === 'statement') {
    body.error = STATEMENTS_FAILED;
    body.failedStatementIndex = failure.index;
    const failed = outcome.outcomes[failure.index];
    // DECISIONS 5: a failure on the parallel path is a 400 whatever its SQLSTATE.
    const sqlState =
      outcome.strategy === 'parallel-reads' || !failed || failed.ok
        ? undefined
        : failed.error.sqlState;
    return {
      body,
      failure: { code: ErrorCodes.DATABASE_ERROR, ...(sqlState ? { sqlState } : {}) },
    };
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
    ? singleResponse(outcome)
    : multipleResponse(outcome, totalExecutionTime);
}

/**
 * The response for a request that could not run: invalid input, a target that cannot be reached, a
 * login the server refused. Anything else is a defect and is rethrown.
 */
export function errorResponse(error: unknown, executionTime: number): QueryResponse {
  if (error instanceof RequestError) {
    return { body: { error: error.message, ...error.body }, failure: { code: error.code } };
  }
  if (error instanceof DatabaseError) {
    return {
      body: { error: queryErrorObject(error, executionTime) },
      failure: { code: error.code, sqlState: error.sqlState },
    };
  }
  if (error instanceof ConnectionError) {
    return {
      body: { error: { message: error.message, code: error.systemCode } },
      failure: { code: error.code },
    };
  }
  if (error instanceof SqlgateError) {
    return { body: { error: error.message }, failure: { code: error.code } };
  }
  throw error;
}
