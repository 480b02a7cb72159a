import { functionEffect, hasSideEffect, type FunctionEffect } from './side-effect-functions';

/** A function call found in a statement. */
export interface FunctionCall {
  /** Lower-case unless it was quoted. */
  name: string;
  /** The qualifying schema, when the call names one. */
  schema?: string;
  /** For set_config(): the third argument is the literal `true` (the setting ends with the transaction). */
  isLocal?: boolean;
}

/** What a statement does that its first keyword does not tell. */
export interface StatementFeatures {
  calls: FunctionCall[];
  /** Mentions CURRENT_TIMESTAMP, pg_stat_* views, TABLESAMPLE... (see side-effect-functions.ts). */
  mentionsVolatileWord: boolean;
  /** Contains INSERT, UPDATE, DELETE or MERGE (a data-modifying CTE, or a WITH ... INSERT). */
  modifiesData: boolean;
  /** SELECT ... INTO creates a table (a temporary one changes the connection's state). */
  selectInto: 'none' | 'table' | 'temporary-table';
  /** FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE: takes row locks, so it needs the write path. */
  locksRows: boolean;
}

export function effectOfCall(call: FunctionCall): FunctionEffect {
  const effect = functionEffect(call.name, call.schema);
  // set_config(name, value, true) only lasts until the end of the transaction.
  if (call.name === 'set_config' && effect === 'session-state' && call.isLocal === true) {
    return 'transaction-state';
  }
  return effect;
}

export interface CallSummary {
  /** Some call changes something: the statement cannot be a read. */
  hasSideEffect: boolean;
  /** Some call leaves state on the connection. */
  changesSession: boolean;
  /** Some call may write relations nobody can name (nextval, dblink...). */
  writesUnknownRelations: boolean;
  /** Some call is not a known stable built-in: the result must not be cached. */
  callsVolatileFunction: boolean;
  /** Some call is not a known built-in: it may read any relation. */
  callsUnknownFunction: boolean;
}

export function summariseCalls(calls: readonly FunctionCall[]): CallSummary {
  const summary: CallSummary = {
    hasSideEffect: false,
    changesSession: false,
    writesUnknownRelations: false,
    callsVolatileFunction: false,
    callsUnknownFunction: false,
  };
  for (const call of calls) {
    const effect = effectOfCall(call);
    if (effect === 'stable') continue;
    summary.callsVolatileFunction = true;
    if (effect === 'unknown') summary.callsUnknownFunction = true;
    if (hasSideEffect(effect)) summary.hasSideEffect = true;
    if (effect === 'session-state') summary.changesSession = true;
    if (effect === 'writes-data' || effect === 'outside-world')
      summary.writesUnknownRelations = true;
  }
  return summary;
}
