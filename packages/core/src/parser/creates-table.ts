/**
 * Whether a statement creates a table from a query: `CREATE TABLE ... AS`, `CREATE MATERIALIZED
 * VIEW ... AS` or `SELECT ... INTO`, anywhere in it (a CTE, EXPLAIN ANALYZE). EXPLAIN ANALYZE of
 * one creates its table even in a READ ONLY transaction (PostgreSQL checks read-only mode on the
 * statement, not on what EXPLAIN runs), so credentials that may only change rows and `readOnly`
 * requests refuse it here (docs/decisions.md 12).
 */
import { StatementContext } from './statement-context';
import { fieldsOf, isSelectNode, walkTree } from './tree';
import type { ParsedStatement } from './types';

export function createsTable(statement: ParsedStatement): boolean {
  const tree = new StatementContext(statement.text).syntaxTree();
  if (tree === null) return true;
  let found = false;
  try {
    walkTree(tree, (key, fields) => {
      if (key === 'CreateTableAsStmt') found = true;
      if (isSelectNode(key) && fieldsOf(fields, 'intoClause') !== null) found = true;
      return !found;
    });
  } catch (error) {
    // A tree nested deeper than the stack is taken to create one: its reach is unknown.
    if (error instanceof RangeError) return true;
    throw error;
  }
  return found;
}
