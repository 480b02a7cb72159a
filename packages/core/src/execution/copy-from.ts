/**
 * POST /api/copy (docs/decisions.md 10.23): one COPY ... FROM STDIN in autocommit, its data
 * streamed from the upload; all or nothing. A request that runs as a role (docs/decisions.md 12)
 * copies inside a transaction of the service's own instead, where SET LOCAL makes it that role.
 */
import { identitySetup, identitySetupFailure } from '../identity';
import { COPY_FROM_STDIN_REASON } from '../parser/statement-rules';
import type { ParsedStatement } from '../parser/types';
import type { RequestIdentity } from '../request';
import type { ExecutionContext } from './context';
import type { LentConnection } from './lent-connection';
import { runAlone } from './strategies/single';
import type { ExecutionOutcome, StatementOutcome } from './outcome';

export function isCopyFromStdin(statement: ParsedStatement): boolean {
  return statement.unsupported === COPY_FROM_STDIN_REASON;
}

export function runCopyFrom(
  context: ExecutionContext,
  statement: ParsedStatement,
  source: AsyncIterable<Uint8Array>,
  identity: RequestIdentity | undefined,
): Promise<ExecutionOutcome> {
  if (!identity) return runAlone(context, (lent) => context.runCopyFrom(lent, statement, source));
  return runAlone(context, (lent) => copyAsIdentity(context, lent, statement, source, identity));
}

/**
 * BEGIN, the identity's SET LOCALs, the COPY, COMMIT: the COPY's outcome, or the failure of a step
 * around it. Whatever failed, runAlone rolls back the transaction left open.
 */
async function copyAsIdentity(
  context: ExecutionContext,
  lent: LentConnection,
  statement: ParsedStatement,
  source: AsyncIterable<Uint8Array>,
  identity: RequestIdentity,
): Promise<StatementOutcome | undefined> {
  for (const step of ['BEGIN', ...identitySetup(identity, 'transaction')]) {
    const failure = await context.runControl(lent, step);
    if (failure) {
      return { ok: false, statement, error: identitySetupFailure(failure), executionTime: 0 };
    }
  }
  const outcome = await context.runCopyFrom(lent, statement, source);
  if (!outcome?.ok) return outcome;
  const failure = await context.runControl(lent, 'COMMIT');
  if (!failure) return outcome;
  return { ok: false, statement, error: failure, executionTime: outcome.executionTime };
}
