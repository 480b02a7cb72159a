/**
 * Whether a statement may run on a hot standby instead of its primary (docs/decisions.md 13): a
 * read that calls only built-ins without side effects. A user-defined or unknown function may
 * write or take locks, which a standby refuses or keeps to itself; nextval and advisory locks make
 * a statement something other than a read already (side-effect-functions.ts).
 */
import { effectOfCall } from './features';
import { StatementContext } from './statement-context';
import { featuresFromTokens } from './token-features';
import { featuresFromTree } from './tree-features';
import type { ParsedStatement } from './types';

/**
 * Built-ins a standby refuses ("recovery is in progress": the WAL positions it does not write), or
 * answers from its own session only (a sequence's value of this connection): the primary's.
 */
const PRIMARY_ONLY = new Set([
  'pg_current_wal_lsn',
  'pg_current_wal_insert_lsn',
  'pg_current_wal_flush_lsn',
  'pg_walfile_name',
  'pg_walfile_name_offset',
  'currval',
  'lastval',
]);

export function runsOnStandby(statement: ParsedStatement): boolean {
  if (statement.statementClass !== 'read' || statement.changesSession) return false;
  if (statement.unsupported !== null) return false;
  const context = new StatementContext(statement.text);
  if (namesPrimaryOnly(context)) return false;
  // Only known stable built-ins are called: nothing to look for.
  if (!statement.callsVolatileFunction) return true;
  const tree = context.syntaxTree();
  const calls = tree !== null ? featuresFromTree(tree).calls : featuresFromTokens(context).calls;
  return calls.every((call) => {
    const effect = effectOfCall(call);
    // now(), random(), pg_is_in_recovery(): no side effect, and a standby runs them.
    return effect === 'stable' || effect === 'volatile';
  });
}

function namesPrimaryOnly(context: StatementContext): boolean {
  for (let i = 0; i < context.length; i++) {
    const name = context.identifierName(i);
    if (name !== undefined && PRIMARY_ONLY.has(name.toLowerCase())) return true;
  }
  return false;
}
