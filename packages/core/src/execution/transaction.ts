/**
 * The one place sqlgate opens and ends transactions of its own: BEGIN and the statements in one
 * round trip; COMMIT only after all succeeded and while the caller is there (docs/decisions.md 10.5
 * and 10.7). One that cannot write (READ ONLY, dryRun) ends in the same round trip.
 */
import { ConnectionError, DatabaseError } from '../errors';
import { identitySetup, identitySetupFailure } from '../identity';
import type { RequestIdentity } from '../request';
import type { ParsedStatement } from '../parser/types';
import type { PortFailure } from '../ports/settled';
import { ABORTED_BEFORE_START, type ExecutionContext, type StartFailure } from './context';
import type { LentConnection } from './lent-connection';
import type { ExecutionFailure, StatementOutcome } from './outcome';
import type { TransactionMode } from './plan';
import { isFatal, unknownOutcome } from './unknown-outcome';

/** `BEGIN ISOLATION LEVEL ... READ ONLY` for the mode; the parts are fixed keywords, never caller text. */
export function beginStatement(mode: TransactionMode): string {
  let sql = 'BEGIN';
  if (mode.isolationLevel) sql += ` ISOLATION LEVEL ${mode.isolationLevel.toUpperCase()}`;
  if (mode.readOnly) sql += ' READ ONLY';
  if (mode.deferrable) sql += ' DEFERRABLE';
  return sql;
}

export type TransactionFailure = Extract<ExecutionFailure, { kind: 'transaction' }>;

export interface TransactionRun {
  /** Outcomes of the statements that succeeded, in order. */
  outcomes: StatementOutcome[];
  /**
   * A statement or the end failed (`transaction`); the transaction as a whole did (`request`); or
   * the caller went away first (`aborted`). Nothing committed, unless COMMIT's outcome is unknown.
   */
  failure?: TransactionFailure | StartFailure;
  /** The caller went away before COMMIT: the transaction was rolled back instead. */
  abandoned?: boolean;
}

/** Runs `statements` in order in one transaction on `lent`, stopping at the first failure. */
export async function runInTransaction(
  context: ExecutionContext,
  lent: LentConnection,
  mode: TransactionMode,
  statements: readonly ParsedStatement[],
): Promise<TransactionRun> {
  const begin = [beginStatement(mode)];
  if (mode.identity) begin.push(...identitySetup(mode.identity, 'transaction'));
  const { timeoutMs } = context.options;
  // SET LOCAL: the timeout ends with the transaction, nothing to clean afterwards.
  if (timeoutMs !== undefined) begin.push(`SET LOCAL statement_timeout = ${timeoutMs}`);
  // Ending in the same round trip is safe only when the end cannot keep anything.
  const endsInBatch = mode.rollbackAtEnd || mode.readOnly;
  const end = mode.rollbackAtEnd ? 'ROLLBACK' : 'COMMIT';
  const batch = await context.runBatch(lent, statements, {
    before: begin,
    ...(endsInBatch ? { after: [end] } : {}),
  });
  if (!batch) return { outcomes: [], failure: ABORTED_BEFORE_START };
  const { outcomes, error } = batch;
  // Decided once, before COMMIT is sent: a cancel that arrives while COMMIT runs changes nothing
  // of what COMMIT did, and the answer must say the transaction committed (10.5).
  const abandoned = !error && !endsInBatch && context.aborted;
  const failure = error
    ? batchFailure(error, outcomes, statements.length, end, mode.identity)
    : !endsInBatch && !abandoned
      ? await commit(context, lent, statements.length)
      : undefined;
  // After a failure the transaction is rolled back, and only then, since BEGIN succeeded.
  await lent.rollbackIfOpen();
  if (failure) return { outcomes, failure };
  return abandoned ? { outcomes, abandoned: true } : { outcomes };
}

/**
 * Why the round trip of BEGIN, the statements (and the end) failed. A failed statement's outcome
 * leaves `outcomes` for the failure, which reports it.
 */
function batchFailure(
  error: PortFailure,
  outcomes: StatementOutcome[],
  statementCount: number,
  end: 'COMMIT' | 'ROLLBACK',
  identity: RequestIdentity | undefined,
): TransactionFailure | StartFailure {
  // A lost connection, parameters that could not be sent, or a failed BEGIN / SET LOCAL: nothing
  // ran that could be kept, and no statement's outcome says more than the error itself.
  if (!(error instanceof DatabaseError) || error.failedStep === 'before') {
    return { kind: 'request', error: identity ? identitySetupFailure(error) : error };
  }
  if (error.failedStep === 'after') {
    return { kind: 'transaction', index: statementCount, error, executionTime: 0, end };
  }
  const failed = outcomes.at(-1);
  if (failed && !failed.ok) {
    outcomes.pop();
    const { statement, executionTime } = failed;
    return { kind: 'transaction', index: statement.index, error, executionTime, statement };
  }
  return { kind: 'transaction', index: statementCount, error, executionTime: 0 };
}

/**
 * COMMIT in its own round trip; why it failed, if it did. A connection lost during COMMIT leaves
 * the outcome unknown, and the error says so.
 */
async function commit(
  context: ExecutionContext,
  lent: LentConnection,
  statementCount: number,
): Promise<TransactionFailure | StartFailure | undefined> {
  const error = await context.runControl(lent, 'COMMIT');
  if (!error) return undefined;
  // A connection ended during COMMIT, by a failure or a FATAL report: it may have committed.
  if (error instanceof ConnectionError || isFatal(error)) {
    const lost = 'The connection was lost during COMMIT; whether the transaction committed';
    return { kind: 'request', error: unknownOutcome(error, lost) };
  }
  // COMMIT itself failed (deferred constraints, serialization): the transaction is gone.
  if (error instanceof DatabaseError) {
    return { kind: 'transaction', index: statementCount, error, executionTime: 0, end: 'COMMIT' };
  }
  return { kind: 'request', error };
}
