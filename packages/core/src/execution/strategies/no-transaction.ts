/**
 * Scripts holding statements that cannot run inside a transaction block (VACUUM, CREATE DATABASE...):
 * in order, autocommit, stopping at the first failure (docs/decisions.md 2.4).
 */
import type { ParsedStatement } from '../../parser/types';
import type { ExecutionContext } from '../context';
import type { ExecutionOutcome } from '../outcome';
import { runInOrder } from './in-order';

export function runWithoutTransaction(
  context: ExecutionContext,
  statements: readonly ParsedStatement[],
): Promise<ExecutionOutcome> {
  return runInOrder(context, statements, 'no-transaction');
}
