/**
 * Whether a statement whose connection was lost may have committed anyway: the rules by which such
 * a failure becomes an unknown outcome (unknown-outcome.ts, docs/decisions.md 10.5).
 */
import type { ParsedStatement } from '../parser/types';
import type { TransactionStatus } from '../ports/connections';
import type { PortFailure } from '../ports/settled';
import { lostAfterSending, unknownOutcome } from './unknown-outcome';

/**
 * A statement that commits on its own (a write outside any transaction, a COMMIT) had reached the
 * server when its connection ended: PostgreSQL may have committed it (unknown-outcome.ts).
 */
export function withUnknownOutcome(
  error: PortFailure,
  statement: ParsedStatement,
  statusBefore: TransactionStatus,
): PortFailure {
  if (!lostAfterSending(error) || !commitsOnItsOwn(statement, statusBefore)) return error;
  return unknownOutcome(
    error,
    'The connection was lost while the statement ran; whether it committed',
  );
}

function commitsOnItsOwn(statement: ParsedStatement, statusBefore: TransactionStatus): boolean {
  const { statementClass, keyword } = statement;
  if (statementClass === 'transaction-control') {
    // COMMIT PREPARED and ROLLBACK PREPARED end a prepared transaction, inside none.
    if (SETTLES_PREPARED.test(statement.text)) return true;
    return statusBefore === 'in-transaction' && COMMITTING_KEYWORDS.has(keyword);
  }
  if (statusBefore !== 'idle') return false;
  // A read that calls a volatile or unknown function (a function of the caller's that inserts)
  // may write as well: without the catalog, it is not proven free of side effects (10.4).
  return (
    statementClass === 'write' ||
    statementClass === 'no-transaction' ||
    (statementClass === 'read' && statement.callsVolatileFunction)
  );
}

/** COMMIT, END and PREPARE TRANSACTION end a transaction that may commit. */
const COMMITTING_KEYWORDS = new Set(['COMMIT', 'END', 'PREPARE']);
const SETTLES_PREPARED = /^(?:COMMIT|ROLLBACK)\s+PREPARED\b/i;
