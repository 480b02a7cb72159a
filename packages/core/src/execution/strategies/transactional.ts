/**
 * Writes (and reads among them) in one transaction of the service's own; the first failure rolls
 * everything back (docs/decisions.md 2.5); dryRun rolls back at the end.
 */
import type { ParsedStatement } from '../../parser/types';
import { notStarted, type ExecutionContext } from '../context';
import { LentConnection } from '../lent-connection';
import type { ExecutionOutcome } from '../outcome';
import type { TransactionMode } from '../plan';
import { runInTransaction } from '../transaction';

export async function runTransactional(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  mode: TransactionMode,
): Promise<ExecutionOutcome> {
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return notStarted('transaction', lent);
  try {
    const { outcomes, failure, abandoned } = await runInTransaction(
      context,
      lent,
      mode,
      statements,
    );
    if (failure && failure.kind !== 'transaction') return notStarted('transaction', failure);
    return {
      strategy: 'transaction',
      outcomes,
      transactionUsed: true,
      rolledBack: mode.rollbackAtEnd || failure !== undefined || abandoned === true,
      ...(failure ? { failure } : {}),
      ...(abandoned ? { failure: { kind: 'aborted', index: statements.length } } : {}),
    };
  } finally {
    lent.release();
  }
}
