/**
 * A request of a session (docs/decisions.md 10.26): in order on the session's connection, as
 * written, stopping at the first failure; the caller's transaction stays open.
 */
import type { ParsedStatement } from '../../parser/types';
import { notStarted, type ExecutionContext } from '../context';
import { LentConnection } from '../lent-connection';
import type { ExecutionOutcome } from '../outcome';
import { runEach } from './in-order';

export async function runInSession(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
): Promise<ExecutionOutcome> {
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return notStarted('session', lent);
  try {
    const { outcomes, stopped: failure } = await runEach(statements, (statement) =>
      withStatementTimeout(context, () => context.runStatement(lent, statement)),
    );
    return {
      strategy: 'session',
      outcomes,
      transactionUsed: false,
      rolledBack: false,
      ...(failure ? { failure } : {}),
    };
  } finally {
    lent.release();
  }
}

/**
 * `timeoutMs` in a session: a statement still running after it is cancelled (57014). Setting
 * statement_timeout instead would change the session's own setting, which belongs to the caller.
 */
async function withStatementTimeout<T>(
  context: ExecutionContext,
  send: () => Promise<T>,
): Promise<T> {
  const { timeoutMs } = context.options;
  if (timeoutMs === undefined) return send();
  const timer = setTimeout(() => context.interruptRunning(), timeoutMs);
  try {
    return await send();
  } finally {
    clearTimeout(timer);
  }
}
