/** One statement, autocommit, on one pooled connection (docs/interface.md, execution rules). */
import type { ParsedStatement } from '../../parser/types';
import {
  ABORTED_BEFORE_START,
  LentConnection,
  notStarted,
  type ExecutionContext,
} from '../context';
import type { ExecutionOutcome } from '../outcome';

export async function runSingle(
  context: ExecutionContext,
  statement: ParsedStatement,
): Promise<ExecutionOutcome> {
  const cache = await context.cacheAttempt(statement);
  if (cache.hit)
    return { strategy: 'single', outcomes: [cache.hit], transactionUsed: false, rolledBack: false };
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return notStarted('single', lent);
  try {
    const timeoutFailure = await lent.applySessionTimeout();
    if (timeoutFailure) return notStarted('single', { kind: 'request', error: timeoutFailure });
    const outcome = await context.runStatement(lent, statement);
    if (!outcome) return notStarted('single', ABORTED_BEFORE_START);
    await cache.keep(outcome);
    // A lone BEGIN (or a function that opened one) must not leak into the next request.
    const rolledBack = await lent.rollbackIfOpen();
    return {
      strategy: 'single',
      outcomes: [outcome],
      transactionUsed: false,
      rolledBack,
      ...(outcome.ok ? {} : { failure: { kind: 'statement', index: 0 } }),
    };
  } finally {
    lent.release();
  }
}
