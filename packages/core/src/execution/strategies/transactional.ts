/**
 * Writes (and reads among them) in one transaction of the service's own; the first failure rolls
 * everything back (docs/decisions.md 2.5); dryRun rolls back at the end.
 */
import type { ParsedStatement } from '../../parser/types';
import type { CacheAttempt } from '../cache-attempt';
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
  // A request run as a role reads in a transaction of its own (docs/decisions.md 12); a lone read
  // still goes through the result cache, whose scope names the role and the claims.
  const [only] = statements;
  const attempt =
    mode.identity !== undefined && statements.length === 1 && only
      ? await context.cacheAttempt(only)
      : undefined;
  if (attempt?.hit) {
    attempt.settle();
    return {
      strategy: 'transaction',
      outcomes: [attempt.hit],
      transactionUsed: false,
      rolledBack: false,
    };
  }
  try {
    return await runInOneTransaction(context, statements, mode, attempt);
  } finally {
    attempt?.settle();
  }
}

async function runInOneTransaction(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  mode: TransactionMode,
  attempt: CacheAttempt | undefined,
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
    const [outcome] = outcomes;
    if (attempt && outcome && !failure && !abandoned) await attempt.keep(outcome);
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
