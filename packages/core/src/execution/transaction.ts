/**
 * The one place where sqlgate opens and ends transactions of its own. BEGIN, the statements and
 * COMMIT (or ROLLBACK, for dryRun) go to the server together, in one round trip; the server runs
 * them in order and skips the rest after a failure, exactly as if they had been sent one by one.
 * After a failure the transaction is rolled back, and only then, since BEGIN succeeded.
 */
import { DatabaseError } from '../errors';
import type { ParsedStatement } from '../parser/types';
import type { ExecutionContext, LentConnection } from './context';
import type { ExecutionFailure, StatementOutcome } from './outcome';
import type { TransactionMode } from './plan';

/** `BEGIN ISOLATION LEVEL ... READ ONLY` for the mode; the parts are fixed keywords, never caller text. */
export function beginStatement(mode: TransactionMode): string {
  let sql = 'BEGIN';
  if (mode.isolationLevel) sql += ` ISOLATION LEVEL ${mode.isolationLevel.toUpperCase()}`;
  if (mode.readOnly) sql += ' READ ONLY';
  return sql;
}

export type TransactionFailure = Extract<ExecutionFailure, { kind: 'transaction' }>;

export interface TransactionRun {
  /** Outcomes of the statements that succeeded, in order. */
  outcomes: StatementOutcome[];
  failure?: TransactionFailure;
}

/**
 * Runs `statements` in order in one transaction on `lent`, stopping at the first failure. Rejects
 * only when the transaction could not begin.
 */
export async function runInTransaction(
  context: ExecutionContext,
  lent: LentConnection,
  mode: TransactionMode,
  statements: readonly ParsedStatement[],
): Promise<TransactionRun> {
  const begin = [beginStatement(mode)];
  const { timeoutMs } = context.options;
  // SET LOCAL: the timeout ends with the transaction, nothing to clean afterwards.
  if (timeoutMs !== undefined) begin.push(`SET LOCAL statement_timeout = ${timeoutMs}`);
  const end = [mode.rollbackAtEnd ? 'ROLLBACK' : 'COMMIT'];
  const { outcomes, error } = await context.runBatch(lent, statements, {
    before: begin,
    after: end,
  });
  let failure: TransactionFailure | undefined;
  if (error?.failedStep === 'before') throw error;
  if (error?.failedStep === 'after') {
    // COMMIT itself failed (deferred constraints, serialization): the transaction is gone.
    failure = { kind: 'transaction', index: statements.length, error, executionTime: 0 };
  } else if (error) {
    const failed = outcomes.pop();
    const statement = failed?.statement;
    const executionTime = failed?.executionTime ?? 0;
    failure = statement
      ? { kind: 'transaction', index: statement.index, error, executionTime, statement }
      : { kind: 'transaction', index: statements.length, error, executionTime };
  }
  await lent.rollbackIfOpen().catch((error: unknown) => {
    if (!(error instanceof DatabaseError)) throw error;
  });
  return failure ? { outcomes, failure } : { outcomes };
}
