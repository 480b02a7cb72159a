/**
 * The one place where sqlgate opens and ends transactions of its own. BEGIN travels with the first
 * statement and COMMIT (or ROLLBACK, for dryRun) with the last, in the same round trips: a
 * one-statement transaction costs one round trip, an n-statement one n. After a failure the
 * transaction is rolled back, and only then, since BEGIN succeeded.
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
 * Runs `statements` in order in one transaction on `lent`. Stops at the first failure. Rejects
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
  const outcomes: StatementOutcome[] = [];
  let failure: TransactionFailure | undefined;
  for (const [position, statement] of statements.entries()) {
    const outcome = await context.runStatement(lent, statement, {
      before: position === 0 ? begin : [],
      after: position === statements.length - 1 ? end : [],
    });
    if (outcome.ok) {
      outcomes.push(outcome);
      continue;
    }
    const { error, executionTime } = outcome;
    if (error.failedStep === 'before') throw error;
    failure =
      error.failedStep === 'after'
        ? // COMMIT itself failed (deferred constraints, serialization): the transaction is gone.
          { kind: 'transaction', index: statements.length, error, executionTime: 0 }
        : { kind: 'transaction', index: statement.index, error, executionTime, statement };
    break;
  }
  await lent.rollbackIfOpen().catch((error: unknown) => {
    if (!(error instanceof DatabaseError)) throw error;
  });
  return failure ? { outcomes, failure } : { outcomes };
}
