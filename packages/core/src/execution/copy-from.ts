/**
 * POST /api/copy (docs/decisions.md 10.23): one COPY ... FROM STDIN in autocommit, its data streamed
 * from the upload. COPY is all or nothing: a bad row fails it with PostgreSQL's error, whose
 * CONTEXT (`where`) names the input line, and nothing is loaded.
 */
import { COPY_FROM_STDIN_REASON } from '../parser/statement-rules';
import type { ParsedStatement } from '../parser/types';
import { ABORTED_BEFORE_START, LentConnection, notStarted, type ExecutionContext } from './context';
import type { ExecutionOutcome } from './outcome';

export function isCopyFromStdin(statement: ParsedStatement): boolean {
  return statement.unsupported === COPY_FROM_STDIN_REASON;
}

export async function runCopyFrom(
  context: ExecutionContext,
  statement: ParsedStatement,
  source: AsyncIterable<Uint8Array>,
): Promise<ExecutionOutcome> {
  const lent = await context.acquire();
  if (!(lent instanceof LentConnection)) return notStarted('single', lent);
  try {
    const timeoutFailure = await lent.applySessionTimeout();
    if (timeoutFailure) return notStarted('single', { kind: 'request', error: timeoutFailure });
    const outcome = await context.runCopyFrom(lent, statement, source);
    if (!outcome) return notStarted('single', ABORTED_BEFORE_START);
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
