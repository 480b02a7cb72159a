/**
 * Statements run one after another in autocommit on one connection, stopping at the first failure.
 * Shared by two strategies, which differ only in what they promise the caller:
 * - caller-managed: scripts with BEGIN / COMMIT / SAVEPOINT run exactly as written (docs/decisions.md
 *   2.3); sqlgate adds no transaction of its own. A transaction the script leaves open is rolled
 *   back and reported.
 * - no-transaction: scripts holding statements that cannot run inside a transaction block (VACUUM,
 *   CREATE DATABASE...): in order, autocommit, stopping at the first failure (docs/decisions.md 2.4).
 */
import type { ParsedStatement } from '../../parser/types';
import { notStarted, type ExecutionContext } from '../context';
import { LentConnection } from '../lent-connection';
import type { ExecutionOutcome, StatementOutcome } from '../outcome';
import type { StrategyName } from '../plan';

export async function runInOrder(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  strategy: Extract<StrategyName, 'caller-managed' | 'no-transaction'>,
): Promise<ExecutionOutcome> {
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return notStarted(strategy, lent);
  try {
    const timeoutFailure = await lent.applySessionTimeout();
    if (timeoutFailure) return notStarted(strategy, { kind: 'request', error: timeoutFailure });
    const outcomes: StatementOutcome[] = [];
    for (const statement of statements) {
      // Once the caller is gone nothing more is sent on its behalf (docs/decisions.md 10.7).
      const outcome = await context.runStatement(lent, statement);
      if (!outcome) break;
      outcomes.push(outcome);
      if (!outcome.ok) break;
    }
    const failed = outcomes.findIndex((outcome) => !outcome.ok);
    // A transaction the script opened and did not end (or that failed) is not left to the next
    // request. If even that ROLLBACK fails, the connection is closed (the server then rolls back),
    // and the answer still lists what ran (docs/decisions.md 10.5).
    const rolledBack = await lent.rollbackIfOpen();
    const failure =
      failed >= 0
        ? { kind: 'statement' as const, index: failed }
        : outcomes.length < statements.length
          ? { kind: 'aborted' as const, index: outcomes.length }
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
