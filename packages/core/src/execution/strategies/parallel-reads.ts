/**
 * Several reads at once, each on its own pooled connection in a READ ONLY transaction (docs/decisions.md 2.2):
 * a statement wrongly classified as a read fails with 25006 instead of writing. When the pool
 * cannot lend a connection per read without waiting, the reads share one connection instead, in
 * READ ONLY transactions sent in one round trip (docs/decisions.md 10.29).
 */
import type { ParsedStatement } from '../../parser/types';
import type { CacheAttempt } from '../cache-attempt';
import { LentConnection, notStarted, type ExecutionContext, type StartFailure } from '../context';
import type { ExecutionOutcome, StatementOutcome } from '../outcome';
import type { TransactionMode } from '../plan';
import { runInTransaction } from '../transaction';

/** One read's outcome, or why it could not start (no connection, a failed BEGIN, the caller gone). */
async function runRead(
  context: ExecutionContext,
  statement: ParsedStatement,
  mode: TransactionMode,
): Promise<StatementOutcome | StartFailure> {
  const cache = await context.cacheAttempt(statement);
  if (cache.hit) return cache.hit;
  try {
    const lent = await context.acquire();
    if (!(lent instanceof LentConnection)) return lent;
    try {
      const { outcomes, failure } = await runInTransaction(context, lent, mode, [statement]);
      if (failure && failure.kind !== 'transaction') return failure;
      const outcome: StatementOutcome = failure
        ? { ok: false, statement, error: failure.error, executionTime: failure.executionTime }
        : (outcomes[0] as StatementOutcome);
      await cache.keep(outcome);
      return outcome;
    } finally {
      lent.release();
    }
  } finally {
    // However the read ended, even by a defect: requests waiting for it stop waiting.
    cache.settle();
  }
}

function isStartFailure(read: StatementOutcome | StartFailure): read is StartFailure {
  return 'kind' in read;
}

/**
 * Runs `work` over `items` with at most `limit` in flight; results keep the items' order. Once
 * `stop` holds for a result, no further item is started (those left out stay undefined).
 */
async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
  stop: (result: R) => boolean,
): Promise<(R | undefined)[]> {
  const results = new Array<R | undefined>(items.length);
  let next = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped && next < items.length) {
      const index = next++;
      const result = await work(items[index] as T);
      results[index] = result;
      if (stop(result)) stopped = true;
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
  const wanted = Math.min(statements.length, context.settings.maxParallelReads);
  const spare = context.spareConnections();
  if (spare !== undefined && spare < wanted) return runReadsTogether(context, statements, mode);
  const reads = await mapConcurrently(
    statements,
    context.settings.maxParallelReads,
    (statement) => runRead(context, statement, mode),
    isStartFailure,
  );
  return readsOutcome(reads);
}

/** The answer of the reads: a read that could not start fails the request as a whole. */
function readsOutcome(
  reads: readonly (StatementOutcome | StartFailure | undefined)[],
): ExecutionOutcome {
  // A read that could not start fails the request as a whole (no read is started after it); a
  // connection error says more than the caller's absence.
  const unstarted = reads.filter((read) => read !== undefined && isStartFailure(read));
  const first = unstarted.find((read) => read.kind === 'request') ?? unstarted[0];
  if (first) return notStarted('parallel-reads', first);
  // Every read started and ran: none is undefined.
  const outcomes = reads.filter(
    (read): read is StatementOutcome => read !== undefined && !isStartFailure(read),
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

/**
 * The reads on one connection, when the pool is busy: those the cache cannot answer run in one
 * READ ONLY transaction, in one round trip. A read that fails ends that transaction, so the reads
 * after it run again in a new one: each read's outcome is the one it would have had alone.
 */
async function runReadsTogether(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  mode: TransactionMode,
): Promise<ExecutionOutcome> {
  const attempts: CacheAttempt[] = [];
  try {
    for (const statement of statements) attempts.push(await context.cacheAttempt(statement));
    const reads: (StatementOutcome | StartFailure | undefined)[] = attempts.map((a) => a.hit);
    const misses = statements.filter((_, position) => !attempts[position]?.hit);
    if (misses.length > 0) {
      const ran = await runOnOneConnection(context, misses, mode);
      if ('kind' in ran) return notStarted('parallel-reads', ran);
      for (const outcome of ran) {
        const position = statements.indexOf(outcome.statement);
        reads[position] = outcome;
        await attempts[position]?.keep(outcome);
      }
    }
    return readsOutcome(reads);
  } finally {
    // However the reads ended, even by a defect: requests waiting for them stop waiting.
    for (const attempt of attempts) attempt.settle();
  }
}

/** Every read's outcome, in order, or why they could not run (as a parallel read's StartFailure). */
async function runOnOneConnection(
  context: ExecutionContext,
  reads: readonly ParsedStatement[],
  mode: TransactionMode,
): Promise<StatementOutcome[] | StartFailure> {
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return lent;
  try {
    const outcomes: StatementOutcome[] = [];
    let pending = reads;
    while (pending.length > 0) {
      const { outcomes: succeeded, failure } = await runInTransaction(context, lent, mode, pending);
      outcomes.push(...succeeded);
      if (!failure) break;
      if (failure.kind !== 'transaction') return failure;
      // The statement that failed, or the last one when the end of the transaction did (as a read
      // alone reports a failed COMMIT).
      const failed = failure.statement ?? pending[pending.length - 1];
      if (!failure.statement) outcomes.pop();
      outcomes.push({
        ok: false,
        statement: failed as ParsedStatement,
        error: failure.error,
        executionTime: failure.executionTime,
      });
      pending = pending.slice(pending.indexOf(failed as ParsedStatement) + 1);
    }
    return outcomes;
  } finally {
    lent.release();
  }
}
