/** One statement, autocommit, on one pooled connection (docs/interface.md, execution rules). */
import type { ParsedStatement } from '../../parser/types';
import { ABORTED_BEFORE_START, notStarted, type ExecutionContext } from '../context';
import { LentConnection } from '../lent-connection';
import type { ExecutionOutcome, StatementOutcome } from '../outcome';

export async function runSingle(
  context: ExecutionContext,
  statement: ParsedStatement,
): Promise<ExecutionOutcome> {
  // Awaited only when the cache is looked up: each await costs a turn of the event loop.
  const attempt = context.cacheAttempt(statement);
  const cache = attempt instanceof Promise ? await attempt : attempt;
  if (cache.hit)
    return { strategy: 'single', outcomes: [cache.hit], transactionUsed: false, rolledBack: false };
  try {
    return await runAlone(
      context,
      (lent) => context.runStatement(lent, statement),
      (outcome) => cache.keep(outcome),
    );
  } finally {
    cache.settle();
  }
}

/**
 * One statement, sent by `send`, in autocommit on a connection of its own; `keep` sees its outcome
 * before the connection goes back (the result cache). Shared with COPY FROM.
 */
export async function runAlone(
  context: ExecutionContext,
  send: (lent: LentConnection) => Promise<StatementOutcome | undefined>,
  keep: (outcome: StatementOutcome) => Promise<void> | undefined = () => undefined,
): Promise<ExecutionOutcome> {
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return notStarted('single', lent);
  try {
    const settingTimeout = lent.applySessionTimeout();
    const timeoutFailure = settingTimeout && (await settingTimeout);
    if (timeoutFailure) return notStarted('single', { kind: 'request', error: timeoutFailure });
    const outcome = await send(lent);
    if (!outcome) return notStarted('single', ABORTED_BEFORE_START);
    const keeping = keep(outcome);
    if (keeping) await keeping;
    // A lone BEGIN (or a function that opened one) must not leak into the next request.
    const rolledBack = lent.mayHaveOpenTransaction() ? await lent.rollbackIfOpen() : false;
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
