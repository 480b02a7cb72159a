/**
 * Several reads at once, each on its own connection in a READ ONLY transaction (docs/decisions.md
 * 2.2); on a busy pool, together on one connection instead (docs/decisions.md 10.29).
 */
import type { ParsedStatement } from '../../parser/types';
import { notStarted, type ExecutionContext, type StartFailure } from '../context';
import { LentConnection } from '../lent-connection';
import type { CacheAttempt } from '../cache-attempt';
import type { ExecutionFailure, ExecutionOutcome, StatementOutcome } from '../outcome';
import type { TransactionMode } from '../plan';
import { runInTransaction } from '../transaction';

/** Where a read gets its connection, and where it gives it back; `end` once every read ended. */
interface Loan {
  lend(): Promise<LentConnection | StartFailure>;
  giveBack(lent: LentConnection): void;
  end(): void;
}

/** A connection of its own for every read. */
function connectionPerRead(context: ExecutionContext): Loan {
  return {
    lend: () => context.acquire(),
    giveBack: (lent) => lent.release(),
    end: () => undefined,
  };
}

/**
 * One connection that the reads take in turn; one that broke is given back and the next read gets
 * another, as a read on its own connection would. `end` gives back the last one.
 */
function sharedConnection(context: ExecutionContext): Loan {
  let current: LentConnection | undefined;
  return {
    lend: async () => {
      if (current) return current;
      const lent = await context.acquire();
      if (lent instanceof LentConnection) current = lent;
      return lent;
    },
    giveBack: (lent) => {
      if (!lent.isBroken) return;
      lent.release();
      current = undefined;
    },
    end: () => current?.release(),
  };
}

/** One read's outcome, or why it could not start (no connection, a failed BEGIN, the caller gone). */
async function runRead(
  context: ExecutionContext,
  statement: ParsedStatement,
  mode: TransactionMode,
  loan: Loan,
): Promise<StatementOutcome | StartFailure> {
  const cache = await context.cacheAttempt(statement);
  if (cache.hit) return cache.hit;
  try {
    const lent = await loan.lend();
    if (!(lent instanceof LentConnection)) return lent;
    try {
      const { outcomes, failure } = await runInTransaction(context, lent, mode, [statement]);
      if (failure && failure.kind !== 'transaction') return failure;
      const outcome = failure ? failedWith(statement, failure) : (outcomes[0] as StatementOutcome);
      const keeping = cache.keep(outcome);
      if (keeping) await keeping;
      return outcome;
    } finally {
      loan.giveBack(lent);
    }
  } finally {
    // However the read ended, even by a defect: requests waiting for it stop waiting.
    cache.settle();
  }
}

/**
 * The reads of a busy pool in one READ ONLY transaction and round trip (docs/decisions.md 10.29);
 * reads skipped after a failure go out again in a transaction of their own, so each runs once.
 * Not with the cache (a read may wait for an identical one). Results by statement position.
 */
async function runReadsInTurn(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
  mode: TransactionMode,
): Promise<(StatementOutcome | StartFailure | undefined)[]> {
  const reads = new Array<StatementOutcome | StartFailure | undefined>(statements.length);
  // Known at once: the request does not use the cache.
  const attempts = statements.map((statement) => context.cacheAttempt(statement) as CacheAttempt);
  let lent: LentConnection | undefined;
  try {
    let next = 0;
    while (next < statements.length) {
      const lending = lent ?? (await context.acquire());
      if (!(lending instanceof LentConnection)) {
        reads[next] = lending;
        break;
      }
      lent = lending;
      const { outcomes, failure } = await runInTransaction(
        context,
        lent,
        mode,
        statements.slice(next),
      );
      const ran: StatementOutcome[] =
        failure?.kind === 'transaction' && !failure.statement
          ? // The end of the transaction failed after every read ran: each read fails with it,
            // as each would have with its own COMMIT.
            outcomes.map(({ statement }) => failedWith(statement, failure))
          : outcomes;
      if (failure?.kind === 'transaction' && failure.statement) {
        ran.push(failedWith(failure.statement, failure));
      }
      for (const outcome of ran) {
        const keeping = (attempts[next] as CacheAttempt).keep(outcome);
        if (keeping) await keeping;
        reads[next++] = outcome;
      }
      if (failure && failure.kind !== 'transaction') {
        reads[next] = failure;
        break;
      }
      // A read that broke the connection leaves the next read to another one.
      if (lent.isBroken) {
        lent.release();
        lent = undefined;
      }
    }
  } finally {
    lent?.release();
    for (const attempt of attempts) attempt.settle();
  }
  return reads;
}

/**
 * Reads may share one transaction where that changes no answer: without the cache and at READ
 * COMMITTED (each read its own snapshot anyway).
 */
function mayShareTransaction(context: ExecutionContext, mode: TransactionMode): boolean {
  const readCommitted =
    mode.isolationLevel === undefined || mode.isolationLevel === 'read committed';
  return readCommitted && !context.mayUseCache();
}

/** A read's outcome when the transaction it ran in failed, at the read or at its end. */
function failedWith(
  statement: ParsedStatement,
  failure: Extract<ExecutionFailure, { kind: 'transaction' }>,
): StatementOutcome {
  return { ok: false, statement, error: failure.error, executionTime: failure.executionTime };
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
  const { maxParallelReads } = context.settings;
  const spare = context.spareConnections();
  const poolBusy = spare !== undefined && spare < Math.min(statements.length, maxParallelReads);
  if (poolBusy && mayShareTransaction(context, mode)) {
    return readsOutcome(await runReadsInTurn(context, statements, mode));
  }
  const loan = poolBusy ? sharedConnection(context) : connectionPerRead(context);
  try {
    const reads = await mapConcurrently(
      statements,
      poolBusy ? 1 : maxParallelReads,
      (statement) => runRead(context, statement, mode, loan),
      isStartFailure,
    );
    return readsOutcome(reads);
  } finally {
    loan.end();
  }
}

/** The answer of the reads: a read that could not start fails the request as a whole. */
function readsOutcome(
  reads: readonly (StatementOutcome | StartFailure | undefined)[],
): ExecutionOutcome {
  // A read that could not start fails the request as a whole (no read is started after it); a
  // connection error says more than the caller's absence.
  const unstarted = reads.filter((read) => read !== undefined && isStartFailure(read));
  const first = unstarted.find((read) => read.kind === 'request') ?? unstarted[0];
  if (first?.kind === 'aborted') {
    // The caller went away or cancelled: the reads that ran keep their answers, up to the first
    // one that was never sent.
    const sent = reads.findIndex((read) => read === undefined || isStartFailure(read));
    if (sent > 0) {
      return {
        strategy: 'parallel-reads',
        outcomes: reads.slice(0, sent) as StatementOutcome[],
        transactionUsed: false,
        rolledBack: false,
        failure: { kind: 'aborted', index: sent },
      };
    }
  }
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
