/**
 * Scripts with BEGIN / COMMIT / SAVEPOINT run exactly as written (docs/decisions.md 2.3); sqlgate adds no
 * transaction of its own. A transaction the script leaves open is rolled back and reported.
 */
import type { ParsedStatement } from '../../parser/types';
import type { ExecutionContext } from '../context';
import type { ExecutionOutcome } from '../outcome';
import { runInOrder } from './in-order';

export function runCallerManaged(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
): Promise<ExecutionOutcome> {
  return runInOrder(context, statements, 'caller-managed');
}
