/** One statement, autocommit, on one pooled connection (docs/interface.md, execution rules). */
import type { ParsedStatement } from '../../parser/types';
import type { ExecutionContext } from '../context';
import type { ExecutionOutcome } from '../outcome';

export async function runSingle(
  context: ExecutionContext,
  statement: ParsedStatement,
): Promise<ExecutionOutcome> {
  const cache = await context.cacheAttempt(statement);
  if (cache.hit)
    return { strategy: 'single', outcomes: [cache.hit], transactionUsed: false, rolledBack: false };
  const lent = await context.acquire();
  try {
    await lent.applySessionTimeout();
    const outcome = await context.runStatement(lent, statement);
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
