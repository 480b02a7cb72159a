/** The one place where sqlgate opens and ends transactions of its own. */
import type { LentConnection, ExecutionContext } from './context';
import type { TransactionMode } from './plan';

/** `BEGIN ISOLATION LEVEL ... READ ONLY` for the mode; the parts are fixed keywords, never caller text. */
export function beginStatement(mode: TransactionMode): string {
  let sql = 'BEGIN';
  if (mode.isolationLevel) sql += ` ISOLATION LEVEL ${mode.isolationLevel.toUpperCase()}`;
  if (mode.readOnly) sql += ' READ ONLY';
  return sql;
}

export type TransactionEnd = 'commit' | 'rollback';

/**
 * Begins a transaction, runs `work`, then commits or rolls back as `work` decides. Rolls back only
 * after a successful BEGIN, and when `work` throws, before rethrowing.
 */
export async function inTransaction<T>(
  context: ExecutionContext,
  lent: LentConnection,
  mode: TransactionMode,
  work: () => Promise<{ value: T; end: TransactionEnd }>,
): Promise<T> {
  await context.runControl(lent, beginStatement(mode));
  let outcome: { value: T; end: TransactionEnd };
  try {
    await lent.applyTransactionTimeout();
    outcome = await work();
  } catch (error) {
    await lent.rollbackIfOpen().catch(() => undefined);
    throw error;
  }
  await context.runControl(lent, outcome.end === 'commit' ? 'COMMIT' : 'ROLLBACK');
  return outcome.value;
}
