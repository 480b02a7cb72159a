/**
 * Statements run one after another in autocommit on one connection, stopping at the first failure.
 * Shared by the caller-managed and the no-transaction strategies, which differ only in what they
 * promise the caller.
 */
import type { ParsedStatement } from '../../parser/types';
import type { ExecutionContext } from '../context';
import type { ExecutionOutcome, StatementOutcome } from '../outcome';
import type { StrategyName } from '../plan';

export async function runInOrder(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  strategy: StrategyName,
): Promise<ExecutionOutcome> {
  const lent = await context.acquire();
  try {
    await lent.applySessionTimeout();
    const outcomes: StatementOutcome[] = [];
    for (const statement of statements) {
      const outcome = await context.runStatement(lent, statement);
      outcomes.push(outcome);
      if (!outcome.ok) break;
    }
    const failed = outcomes.findIndex((outcome) => !outcome.ok);
    // A transaction the script opened and did not end (or that failed) is not left to the next request.
    const rolledBack = await lent.rollbackIfOpen();
    const failure =
      failed >= 0
        ? { kind: 'statement' as const, index: failed }
        : rolledBack
          ? { kind: 'left-open' as const }
          : undefined;
    return {
      strategy,
      outcomes,
      transactionUsed: false,
      rolledBack,
      ...(failure ? { failure } : {}),
    };
  } finally {
    lent.release();
  }
}
