/**
 * Several reads at once, each on its own pooled connection in a READ ONLY transaction (docs/decisions.md 2.2):
 * a statement wrongly classified as a read fails with 25006 instead of writing.
 */
import type { ParsedStatement } from '../../parser/types';
import type { ExecutionContext } from '../context';
import type { ExecutionOutcome, StatementOutcome } from '../outcome';
import type { TransactionMode } from '../plan';
import { runInTransaction } from '../transaction';

async function runRead(
  context: ExecutionContext,
  statement: ParsedStatement,
  mode: TransactionMode,
): Promise<StatementOutcome> {
  const cache = await context.cacheAttempt(statement);
  if (cache.hit) return cache.hit;
  const lent = await context.acquire();
  try {
    const { outcomes, failure } = await runInTransaction(context, lent, mode, [statement]);
    const outcome: StatementOutcome = failure
      ? { ok: false, statement, error: failure.error, executionTime: failure.executionTime }
      : (outcomes[0] as StatementOutcome);
    await cache.keep(outcome);
    return outcome;
  } finally {
    lent.release();
  }
}

/** Runs `work` over `items` with at most `limit` in flight; results keep the items' order. */
async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export async function runParallelReads(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  mode: TransactionMode,
): Promise<ExecutionOutcome> {
  const outcomes = await mapConcurrently(
    statements,
    context.settings.maxParallelReads,
    (statement) => runRead(context, statement, mode),
  );
  const failed = outcomes.findIndex((outcome) => !outcome.ok);
  return {
    strategy: 'parallel-reads',
    outcomes,
    transactionUsed: false,
    rolledBack: false,
    ...(failed >= 0 ? { failure: { kind: 'statement', index: failed } } : {}),
  };
}
