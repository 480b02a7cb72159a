/**
 * pg_settings' UPDATE rule calls set_config(name, setting, false): an UPDATE of it SETs for the
 * session (docs/decisions.md 10.15, 10.33). No other built-in view has such a rule.
 */
import type { StatementContext } from './statement-context';
import { fieldsOf, stringOf, walkTree } from './tree';

const SETTINGS_VIEW = 'pg_settings';

/**
 * Statements that keep the statements in them for later (a rule's actions, a function's body)
 * rather than run them.
 */
const STORED_CODE = new Set(['RuleStmt', 'CreateFunctionStmt']);

/**
 * The statement UPDATEs pg_settings under any spelling, in a CTE or EXPLAIN ANALYZE too. Only a
 * text holding UPDATE and such a name is parsed; an unparsable one counts as updating it.
 */
export function updatesSettingsView(context: StatementContext): boolean {
  if (!mayUpdateSettingsView(context)) return false;
  const tree = context.syntaxTree();
  if (tree === null) return true;
  let found = false;
  walkTree(tree, (key, fields) => {
    if (found || STORED_CODE.has(key)) return false;
    if (key === 'UpdateStmt') found = isSettingsView(fieldsOf(fields, 'relation'));
    return true;
  });
  return found;
}

/** `pg_settings` or `pg_catalog.pg_settings`: unqualified, pg_catalog comes first in the path. */
function isSettingsView(relation: unknown): boolean {
  const schema = stringOf(relation, 'schemaname');
  return (
    stringOf(relation, 'relname') === SETTINGS_VIEW &&
    (schema === undefined || schema === 'pg_catalog')
  );
}

/** The tokens hold UPDATE and a name that may be pg_settings (a U&"..." one may be anything). */
function mayUpdateSettingsView(context: StatementContext): boolean {
  let update = false;
  let name = false;
  for (let i = 0; i < context.length && !(update && name); i++) {
    const kind = context.kind(i);
    if (kind === 'word') {
      if (context.isWord(i, 'update')) update = true;
      else if (context.isWord(i, SETTINGS_VIEW)) name = true;
    } else if (kind === 'quoted-ident') {
      const identifier = context.identifierName(i);
      if (identifier === undefined || identifier === SETTINGS_VIEW) name = true;
    }
  }
  return update && name;
}
