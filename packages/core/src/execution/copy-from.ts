/**
 * POST /api/copy (docs/decisions.md 10.23): one COPY ... FROM STDIN in autocommit, its data
 * streamed from the upload; all or nothing.
 */
import { COPY_FROM_STDIN_REASON } from '../parser/statement-rules';
import type { ParsedStatement } from '../parser/types';
import type { ExecutionContext } from './context';
import { runAlone } from './strategies/single';
import type { ExecutionOutcome } from './outcome';

export function isCopyFromStdin(statement: ParsedStatement): boolean {
  return statement.unsupported === COPY_FROM_STDIN_REASON;
}

export function runCopyFrom(
  context: ExecutionContext,
  statement: ParsedStatement,
  source: AsyncIterable<Uint8Array>,
): Promise<ExecutionOutcome> {
  return runAlone(context, (lent) => context.runCopyFrom(lent, statement, source));
}
