import type { FunctionCall, StatementFeatures } from './features';
import {
  fieldsOf,
  isSelectNode,
  listOf,
  nameParts,
  stringOf,
  unwrapNode,
  walkTree,
  type TreeFields,
} from './tree';

const MODIFYING_STATEMENTS = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

/**
 * SQL/JSON's query functions are syntax in the tree, not FuncCall nodes: named as the tokens see
 * them (`json_value(`), so both readings judge them alike (else they would count as no call).
 */
const JSON_FUNCTION_CALLS: Readonly<Record<string, string>> = {
  JSON_VALUE_OP: 'json_value',
  JSON_QUERY_OP: 'json_query',
  JSON_EXISTS_OP: 'json_exists',
};

/** The features of a statement read from its syntax tree (exact where the tokens guess). */
export function featuresFromTree(root: unknown): Omit<StatementFeatures, 'mentionsVolatileWord'> {
  const features: Omit<StatementFeatures, 'mentionsVolatileWord'> = {
    calls: [],
    modifiesData: false,
    selectInto: 'none',
    locksRows: false,
  };
  walkTree(root, (key, fields) => {
    if (MODIFYING_STATEMENTS.has(key)) features.modifiesData = true;
    else if (key === 'FuncCall') features.calls.push(callOf(fields));
    else if (key === 'JsonTable') features.calls.push({ name: 'json_table' });
    else if (key === 'JsonFuncExpr') {
      const name = JSON_FUNCTION_CALLS[stringOf(fields, 'op') ?? ''];
      if (name !== undefined) features.calls.push({ name });
    } else if (isSelectNode(key)) {
      if (listOf(fields, 'lockingClause').length > 0) features.locksRows = true;
      const into = fieldsOf(fields, 'intoClause');
      if (into !== null) {
        const persistence = stringOf(fieldsOf(into, 'rel'), 'relpersistence');
        features.selectInto = persistence === 't' ? 'temporary-table' : 'table';
      }
    }
  });
  return features;
}

function callOf(fields: TreeFields): FunctionCall {
  const parts = nameParts(listOf(fields, 'funcname'));
  const name = parts[parts.length - 1] ?? '';
  const call: FunctionCall =
    parts.length > 1 ? { name, schema: parts[parts.length - 2]! } : { name };
  if (name === 'set_config') call.isLocal = isLiteralTrue(listOf(fields, 'args')[2]);
  return call;
}

function isLiteralTrue(argument: unknown): boolean {
  const node = unwrapNode(argument);
  if (node === null || node.kind !== 'A_Const') return false;
  return fieldsOf(node.fields, 'boolval')?.['boolval'] === true;
}
