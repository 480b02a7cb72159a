/**
 * Which strategy runs a request: docs/decisions.md 2. A pure function of the parsed statements and
 * the request options, so every rule is unit-testable without a database.
 */
import { ErrorCodes, RequestError } from '../errors';
import { createsTable } from '../parser/creates-table';
import type { ParsedStatement } from '../parser/types';
import type { IsolationLevel, QueryOptions, RequestIdentity } from '../request';
import { withFields } from '../with-fields';

export type StrategyName =
  'single' | 'parallel-reads' | 'transaction' | 'caller-managed' | 'no-transaction' | 'session';

/** How the transaction that sqlgate opens is begun and ended. */
export interface TransactionMode {
  readOnly: boolean;
  isolationLevel?: IsolationLevel;
  /** dryRun: roll back instead of committing. */
  rollbackAtEnd: boolean;
  deferrable?: boolean;
  /** The statements run as this role, with these claims (SET LOCAL after BEGIN). */
  identity?: RequestIdentity;
}

export interface ExecutionPlan {
  strategy: StrategyName;
  /** One statement answers with one QueryExecutionResult (docs/interface.md, execution rules), several with MultipleStatementsResponse. */
  shape: 'single' | 'multiple';
  transaction: TransactionMode;
}

/** Statements that manage the transaction or cannot run inside one: a request-wide transaction cannot hold them. */
const OUTSIDE_SERVICE_TRANSACTION = new Set(['transaction-control', 'no-transaction']);

function rejectUnsupported(
  statements: readonly ParsedStatement[],
  allowed: (statement: ParsedStatement) => boolean,
): void {
  const unsupported = statements.find(
    (statement) => statement.unsupported !== null && !allowed(statement),
  );
  if (unsupported) {
    throw new RequestError(ErrorCodes.UNSUPPORTED_STATEMENT, unsupported.unsupported as string, {
      statementIndex: unsupported.index,
    });
  }
}

export interface PlanChoices {
  allowed?: (statement: ParsedStatement) => boolean;
  batch?: boolean;
  /**
   * Who the statements run as (docs/decisions.md 12): always in one transaction of the service's
   * own, where SET LOCAL makes them run as the role; READ ONLY for reads-only credentials.
   */
  identity?: RequestIdentity;
}

/** Refuses what must run outside the transaction sqlgate opens; `refusal` begins the message. */
function rejectOutsideTransaction(
  statements: readonly ParsedStatement[],
  refusal: string,
  refusesSessionStatements = false,
): void {
  // readOnly also refuses session statements: `SET transaction_read_only = off` before the first
  // snapshot would turn the READ ONLY transaction into a writable one.
  const offending = statements.find(
    (statement) =>
      OUTSIDE_SERVICE_TRANSACTION.has(statement.statementClass) ||
      (refusesSessionStatements && statement.statementClass === 'session'),
  );
  if (offending) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `${refusal} ${offending.keyword} (statement ${offending.index}): it must run in the transaction the service opens`,
      { statementIndex: offending.index },
    );
  }
}

/**
 * EXPLAIN ANALYZE of CREATE TABLE ... AS (or a materialized view, or SELECT ... INTO) creates the
 * table even in the READ ONLY transaction `readOnly` opens (parser/creates-table.ts).
 */
function refuseExplainedTableCreation(statements: readonly ParsedStatement[]): void {
  const offending = statements.find(
    (statement) =>
      statement.keyword === 'EXPLAIN' &&
      statement.statementClass !== 'read' &&
      createsTable(statement),
  );
  if (offending) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `'readOnly' cannot be combined with EXPLAIN ANALYZE of a statement that creates a table (statement ${offending.index}): PostgreSQL would create it even in a read-only transaction`,
      { statementIndex: offending.index },
    );
  }
}

function rejectIncompatibleOptions(
  statements: readonly ParsedStatement[],
  options: QueryOptions,
): void {
  if (options.params && statements.length > 1) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      "'params' can only be used with exactly one statement",
    );
  }
  if (options.readOnly) refuseExplainedTableCreation(statements);
  for (const [option, enabled] of [
    ['dryRun', options.dryRun],
    ['readOnly', options.readOnly],
  ] as const) {
    if (enabled)
      rejectOutsideTransaction(
        statements,
        `'${option}' cannot be combined with`,
        option === 'readOnly',
      );
  }
}

/**
 * Chooses the strategy. Throws `RequestError` for requests that cannot be run as asked
 * (COPY FROM STDIN, params with several statements, dryRun/readOnly with transaction control).
 * `allowed` admits statements that are otherwise refused, where the caller
 * can serve them (a lone COPY ... TO STDOUT in a streamed answer). A `batch` always runs in one
 * transaction of the service's own, as its caller asked (QueryRequest.sql).
 */
export function planExecution(
  statements: readonly ParsedStatement[],
  options: QueryOptions,
  { allowed = () => false, batch = false, identity }: PlanChoices = {},
): ExecutionPlan {
  rejectUnsupported(statements, allowed);
  rejectIncompatibleOptions(statements, options);
  const transaction: TransactionMode = {
    readOnly: options.readOnly || identity?.may === 'read',
    rollbackAtEnd: options.dryRun,
    ...(options.isolationLevel ? { isolationLevel: options.isolationLevel } : {}),
    ...(options.deferrable ? { deferrable: true } : {}),
    ...(identity ? { identity } : {}),
  };
  if (batch) {
    rejectOutsideTransaction(statements, 'A batch cannot hold');
    return { strategy: 'transaction', shape: 'multiple', transaction };
  }
  if (identity) {
    rejectOutsideTransaction(statements, 'A request with server-side credentials cannot hold');
    const shape = statements.length === 1 ? 'single' : 'multiple';
    return { strategy: 'transaction', shape, transaction };
  }
  const wrapped = options.dryRun || options.readOnly;

  if (statements.length === 1) {
    return { strategy: wrapped ? 'transaction' : 'single', shape: 'single', transaction };
  }
  const classes = new Set(statements.map((statement) => statement.statementClass));
  if (classes.has('transaction-control'))
    return { strategy: 'caller-managed', shape: 'multiple', transaction };
  if (classes.has('no-transaction'))
    return { strategy: 'no-transaction', shape: 'multiple', transaction };
  const onlyReads = statements.every((statement) => statement.statementClass === 'read');
  if (onlyReads && !options.dryRun) {
    // Reads that change the session (set_config(), user-defined functions: docs/decisions.md 10.15)
    // stay on one connection, in order, but still READ ONLY: a write hidden in a function fails
    // with 25006 instead of writing.
    const independent = statements.every((statement) => !statement.changesSession);
    return {
      strategy: independent ? 'parallel-reads' : 'transaction',
      shape: 'multiple',
      transaction: withFields(transaction, { readOnly: true }),
    };
  }
  return { strategy: 'transaction', shape: 'multiple', transaction };
}

/**
 * How a session's request runs (docs/decisions.md 10.26): as written, in order, on the session's
 * connection. Options that make sqlgate open a transaction of its own cannot apply.
 */
export function planSessionRequest(
  statements: readonly ParsedStatement[],
  options: QueryOptions,
): ExecutionPlan {
  const copy = statements.find(
    (statement) => statement.unsupported !== null && statement.keyword === 'COPY',
  );
  if (copy) {
    throw new RequestError(
      ErrorCodes.UNSUPPORTED_STATEMENT,
      'COPY ... FROM STDIN and COPY ... TO STDOUT cannot run in a session: use POST /api/copy or POST /api/query',
      { statementIndex: copy.index },
    );
  }
  rejectUnsupported(statements, () => false);
  rejectIncompatibleOptions(statements, { ...options, dryRun: false, readOnly: false });
  return {
    strategy: 'session',
    shape: statements.length === 1 ? 'single' : 'multiple',
    transaction: { readOnly: false, rollbackAtEnd: false },
  };
}
