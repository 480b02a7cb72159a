/** Runs a planned request with the strategy the plan names. */
import type { ParsedStatement } from '../parser/types';
import type { ExecutionContext } from './context';
import type { ExecutionOutcome } from './outcome';
import type { ExecutionPlan } from './plan';
import { sessionStateNeedOf } from './transaction-pooling';
import { runInOrder } from './strategies/in-order';
import { runInSession } from './strategies/in-session';
import { runParallelReads } from './strategies/parallel-reads';
import { runSingle } from './strategies/single';
import { runTransactional } from './strategies/transactional';

export function executePlan(
  context: ExecutionContext,
  plan: ExecutionPlan,
  statements: readonly ParsedStatement[],
): Promise<ExecutionOutcome> {
  // A session's connection was vetted when the session opened (docs/decisions.md 10.33).
  if (plan.strategy !== 'session') context.sessionStateNeed = sessionStateNeedOf(statements);
  switch (plan.strategy) {
    case 'single':
      return runSingle(context, statements[0] as ParsedStatement);
    case 'parallel-reads':
      return runParallelReads(context, statements, plan.transaction);
    case 'transaction':
      return runTransactional(context, statements, plan.transaction);
    case 'caller-managed':
    case 'no-transaction':
      return runInOrder(context, statements, plan.strategy);
    case 'session':
      return runInSession(context, statements);
  }
}
