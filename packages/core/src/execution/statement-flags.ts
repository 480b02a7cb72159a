/**
 * Whether each statement's run may stop at the request's limits, and may be kept as a named
 * prepared statement: decided once per statement object.
 */
import type { ParsedStatement } from '../parser/types';

/**
 * A read that may be stopped at its limits (docs/decisions.md 10.4): no volatile or unknown
 * function and no relation (a view may call one); anything else runs to completion.
 */
export function mayStopEarly(statement: ParsedStatement): boolean {
  if (statement.statementClass !== 'read' || statement.callsVolatileFunction) return false;
  if (statement.keyword === 'TABLE') return false;
  // Without FROM or JOIN a read names no relation: no need for the syntax tree (a word inside a
  // literal only sends the statement the slower, always-correct way).
  if (!MAY_NAME_RELATION.test(statement.text)) return true;
  const { reads } = statement.relations;
  return reads !== null && reads.length === 0;
}

const MAY_NAME_RELATION = /\b(?:from|join)\b/i;

/**
 * A statement that may be run again by name (RunOptions.nameable): a read that leaves the
 * connection as it found it, without a string literal, whose value PostgreSQL fixes at parse time.
 */
export function mayBeNamed(statement: ParsedStatement): boolean {
  return (
    statement.statementClass === 'read' &&
    !statement.changesSession &&
    !HOLDS_A_STRING_LITERAL.test(statement.sql)
  );
}

const HOLDS_A_STRING_LITERAL = /'|\$(?:[A-Za-z_\u0080-\uffff][A-Za-z_0-9\u0080-\uffff]*)?\$/;

/** A statement's RunOptions flags, and the lists a lone statement's options share. */
export interface StatementRunFlags {
  stopEarly: boolean;
  nameable: boolean;
  alone: { stopEarly: readonly boolean[]; nameable: readonly boolean[] };
}

/**
 * The flags of each statement, computed once: the parse memo hands every request with the same
 * text the same statement objects, and the flags depend on the statement alone.
 */
const RUN_FLAGS = new WeakMap<ParsedStatement, StatementRunFlags>();

export function runFlagsOf(statement: ParsedStatement): StatementRunFlags {
  let flags = RUN_FLAGS.get(statement);
  if (!flags) {
    const stopEarly = mayStopEarly(statement);
    const nameable = mayBeNamed(statement);
    flags = { stopEarly, nameable, alone: { stopEarly: [stopEarly], nameable: [nameable] } };
    RUN_FLAGS.set(statement, flags);
  }
  return flags;
}
