/**
 * Statements one after another in autocommit on one connection, stopping at the first failure:
 * caller-managed (docs/decisions.md 2.3; a transaction left open is rolled back) and
 * no-transaction (docs/decisions.md 2.4).
 */
import type { ParsedStatement } from '../../parser/types';
import { notStarted, type ExecutionContext } from '../context';
import { LentConnection } from '../lent-connection';
import type { ExecutionFailure, ExecutionOutcome, StatementOutcome } from '../outcome';
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
    const { outcomes, stopped } = await runEach(statements, (statement) =>
      context.runStatement(lent, statement),
    );
    // A transaction the script left open (or failed) is rolled back, or the connection closed; the
    // answer still lists what ran (docs/decisions.md 10.5).
    const rolledBack = await lent.rollbackIfOpen();
    const failure = stopped ?? (rolledBack ? { kind: 'left-open' as const } : undefined);
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

/**
 * Sends each statement in turn until one fails, or until one is not sent because the caller went
 * away: once it is gone nothing more is sent on its behalf (docs/decisions.md 10.7).
 */
export async function runEach(
  statements: readonly ParsedStatement[],
  send: (statement: ParsedStatement) => Promise<StatementOutcome | undefined>,
): Promise<{
  outcomes: StatementOutcome[];
  stopped?: Extract<ExecutionFailure, { index: number }>;
}> {
  const outcomes: StatementOutcome[] = [];
  for (const statement of statements) {
    const outcome = await send(statement);
    if (!outcome) return { outcomes, stopped: { kind: 'aborted', index: outcomes.length } };
    outcomes.push(outcome);
    if (!outcome.ok)
      return { outcomes, stopped: { kind: 'statement', index: outcomes.length - 1 } };
  }
  return { outcomes };
}
