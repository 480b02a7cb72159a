/**
 * The one place where sqlgate opens and ends transactions of its own. BEGIN and the statements go
 * to the server together, in one round trip; the server runs them in order and skips the rest after
 * a failure, exactly as if they had been sent one by one. COMMIT goes only after every statement
 * succeeded and while the caller is still there: a caller that went away, or anything that went
 * wrong on sqlgate's side, leaves nothing committed (docs/decisions.md 10.5 and 10.7). A transaction
 * that cannot write (READ ONLY, or dryRun's ROLLBACK) ends in the same round trip. After a failure
 * the transaction is rolled back, and only then, since BEGIN succeeded.
 */
import { ConnectionError, DatabaseError } from '../errors';
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
  /** The caller went away before COMMIT: the transaction was rolled back instead. */
  abandoned?: boolean;
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
  // Ending in the same round trip is safe only when the end cannot keep anything.
  const endsInBatch = mode.rollbackAtEnd || mode.readOnly;
  const end = mode.rollbackAtEnd ? 'ROLLBACK' : 'COMMIT';
  const { outcomes, error } = await context.runBatch(lent, statements, {
    before: begin,
    ...(endsInBatch ? { after: [end] } : {}),
  });
  let failure: TransactionFailure | undefined;
  if (error?.failedStep === 'before') throw error;
  const commitError =
    error?.failedStep === 'after'
      ? error
      : !error && !endsInBatch && !context.aborted
        ? await commit(context, lent)
        : undefined;
  if (commitError) {
    // COMMIT itself failed (deferred constraints, serialization): the transaction is gone.
    failure = {
      kind: 'transaction',
      index: statements.length,
      error: commitError,
      executionTime: 0,
      end,
    };
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
  if (failure) return { outcomes, failure };
  return !error && !endsInBatch && context.aborted ? { outcomes, abandoned: true } : { outcomes };
}

/**
 * COMMIT in its own round trip; its database error, if any. A connection lost during COMMIT leaves
 * the outcome unknown, and the error says so.
 */
async function commit(
  context: ExecutionContext,
  lent: LentConnection,
): Promise<DatabaseError | undefined> {
  try {
    await context.runControl(lent, 'COMMIT');
    return undefined;
  } catch (error) {
    if (error instanceof DatabaseError) return error;
    if (error instanceof ConnectionError) {
      throw new ConnectionError(
        error.code,
        `The connection was lost during COMMIT; whether the transaction committed is unknown (${error.message})`,
        error.systemCode,
        { cause: error },
      );
    }
    throw error;
  }
}
