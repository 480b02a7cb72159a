/**
 * Writes (and reads mixed with them) in one transaction of the service's own: BEGIN, in order,
 * COMMIT; the first failure rolls everything back (SPEC rule 5, DECISIONS 2.5). dryRun rolls back at
 * the end instead of committing.
 */
import { DatabaseError } from '../../errors';
import type { ParsedStatement } from '../../parser/types';
import type { ExecutionContext } from '../context';
import type { ExecutionFailure, ExecutionOutcome, StatementOutcome } from '../outcome';
import type { TransactionMode } from '../plan';
import { inTransaction } from '../transaction';

export async function runTransactional(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  mode: TransactionMode,
): Promise<ExecutionOutcome> {
  const outcomes: StatementOutcome[] = [];
  let failure: ExecutionFailure | undefined;
  const lent = await context.acquire();
  try {
    await inTransaction(context, lent, mode, async () => {
      for (const statement of statements) {
        const outcome = await context.runStatement(lent, statement);
        if (!outcome.ok) {
          const { error, executionTime } = outcome;
          failure = { kind: 'transaction', index: statement.index, error, executionTime, statement };
          return { value: undefined, end: 'rollback' };
        }
        outcomes.push(outcome);
      }
      return { value: undefined, end: mode.rollbackAtEnd ? 'rollback' : 'commit' };
    });
  } catch (error) {
    // COMMIT itself can fail (deferred constraints, serialization failures): the transaction is gone.
    if (!(error instanceof DatabaseError)) throw error;
    failure = { kind: 'transaction', index: statements.length, error, executionTime: 0 };
  } finally {
    lent.release();
  }
  return {
    strategy: 'transaction',
    outcomes,
    transactionUsed: true,
    rolledBack: mode.rollbackAtEnd || failure !== undefined,
    ...(failure ? { failure } : {}),
  };
}
