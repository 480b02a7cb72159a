/**
 * What a statement leaves on its connection beyond its transaction (a setting, temporary table,
 * lock, listener, prepared statement, held cursor), which cannot work behind a transaction pooler
 * (docs/decisions.md 10.33). Only what the text shows is seen: DO, CALL, unknown functions, views
 * and triggers are the rule's limit (10.15).
 */
import { effectOfCall, type FunctionCall } from './features';
import { updatesSettingsView } from './settings-view';
import { StatementContext } from './statement-context';
import { featuresFromTokens } from './token-features';
import { featuresFromTree } from './tree-features';
import type { ParsedStatement } from './types';

/**
 * What `statement` leaves behind its transaction, as a caller would name it (`SET`, `LISTEN`,
 * `pg_advisory_lock()`...), or undefined when it leaves nothing it can be seen to leave.
 */
export function stateOutlivingTransaction(statement: ParsedStatement): string | undefined {
  // Statements that leave the session clean are most of them, and need no second look.
  if (!statement.changesSession) return undefined;
  const context = new StatementContext(statement.text);
  let first = 0;
  while (context.isChar(first, '(')) first++;
  if (statement.statementClass === 'session') {
    const left = sessionStatementState(context, first);
    if (left !== undefined) return left;
  }
  // Its rule calls set_config(name, setting, false).
  if (updatesSettingsView(context)) return 'UPDATE pg_settings';
  return sessionStateCall(context);
}

/**
 * Session statements that leave nothing behind: they take state away (RESET, UNLISTEN, DEALLOCATE,
 * DISCARD) or act on a cursor of the transaction.
 */
const LEAVING_NOTHING = new Set([
  'reset',
  'unlisten',
  'deallocate',
  'discard',
  'close',
  'fetch',
  'move',
]);

/** Queries of class `session` are SELECT ... INTO TEMPORARY (classify.ts). */
const QUERY_KEYWORDS = new Set(['select', 'with', 'table', 'values']);

/** Statements whose class is `session` (classify.ts), by what they leave. */
function sessionStatementState(context: StatementContext, first: number): string | undefined {
  const keyword = context.word(first);
  if (keyword === undefined) return 'session state';
  if (LEAVING_NOTHING.has(keyword)) return undefined;
  if (keyword === 'set') return settingState(context, first + 1);
  if (keyword === 'declare') {
    return heldCursor(context, first + 1) ? 'DECLARE ... WITH HOLD' : undefined;
  }
  if (keyword === 'create') {
    return onCommitDrop(context, first) ? undefined : 'a temporary object (CREATE TEMPORARY)';
  }
  if (QUERY_KEYWORDS.has(keyword)) return 'a temporary table (SELECT ... INTO TEMPORARY)';
  // LISTEN, LOAD, PREPARE, and whatever else the classifier counts as session state.
  return keyword.toUpperCase();
}

/**
 * SET: LOCAL, TRANSACTION and CONSTRAINTS end with the transaction; anything else outlives it. A
 * dot after the word makes it the first part of a custom variable's name: `SET local.x = 'a'`
 * sets the variable local.x for the session.
 */
function settingState(context: StatementContext, next: number): string | undefined {
  const word = context.word(next);
  const endsWithTransaction = word === 'local' || word === 'transaction' || word === 'constraints';
  return endsWithTransaction && !context.isChar(next + 1, '.') ? undefined : 'SET';
}

/** DECLARE name ... WITH HOLD CURSOR FOR: the options before FOR say so (WITHOUT HOLD does not). */
function heldCursor(context: StatementContext, from: number): boolean {
  for (let i = from; i < context.length && !context.isWord(i, 'for'); i++) {
    if (context.isWord(i, 'hold') && context.isWord(i - 1, 'with')) return true;
  }
  return false;
}

/** CREATE TEMPORARY TABLE ... ON COMMIT DROP: dropped at the end of its transaction. */
function onCommitDrop(context: StatementContext, from: number): boolean {
  for (let i = from; i < context.length - 2; i++) {
    if (context.isWord(i, 'on') && context.isWord(i + 1, 'commit') && context.isWord(i + 2, 'drop'))
      return true;
  }
  return false;
}

/**
 * A call of a built-in whose effect is session state (pg_advisory_lock(), set_config(..., false),
 * setseed()...): its name with `()`. set_config's third argument decides its scope, which only the
 * syntax tree tells.
 */
function sessionStateCall(context: StatementContext): string | undefined {
  let calls: FunctionCall[] = featuresFromTokens(context).calls;
  if (calls.some((call) => call.name === 'set_config')) {
    const tree = context.syntaxTree();
    if (tree !== null) calls = featuresFromTree(tree).calls;
  }
  const call = calls.find((candidate) => effectOfCall(candidate) === 'session-state');
  return call && `${call.name}()`;
}
