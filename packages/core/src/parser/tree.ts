/**
 * libpg-query's syntax tree, read loosely as `unknown` and narrowed here: the generated node
 * types change with every PostgreSQL major version.
 */

import { parseWithPostgres } from './postgres-parser';

export { assertParserLoaded, loadParser, parserLoaded } from './postgres-parser';

/** A node's fields: `{ relname: 't', ... }`. */
export type TreeFields = Readonly<Record<string, unknown>>;

/**
 * The tree of the single statement `sql`, as `{ NodeKind: fields }`, or null when it is unknown:
 * PostgreSQL's grammar rejects it (syntax errors, psql variables, syntax newer than the bundled
 * parser), or it is too long to parse (postgres-parser.ts).
 */
export function parseStatementTree(sql: string): unknown {
  const statements = listOf(parseWithPostgres(sql), 'stmts');
  if (statements.length !== 1) return null;
  return fieldsOf(statements[0], 'stmt') ?? null;
}

export function isFields(value: unknown): value is TreeFields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The kind and fields of a wrapped node `{ Kind: fields }`, or null. */
export function unwrapNode(node: unknown): { kind: string; fields: TreeFields } | null {
  if (!isFields(node)) return null;
  for (const kind in node) {
    const fields = node[kind];
    return isFields(fields) ? { kind, fields } : null;
  }
  return null;
}

export function fieldsOf(value: unknown, key: string): TreeFields | null {
  if (!isFields(value)) return null;
  const field = value[key];
  return isFields(field) ? field : null;
}

export function listOf(value: unknown, key: string): readonly unknown[] {
  if (!isFields(value)) return [];
  const field = value[key];
  return Array.isArray(field) ? field : [];
}

export function stringOf(value: unknown, key: string): string | undefined {
  if (!isFields(value)) return undefined;
  const field = value[key];
  return typeof field === 'string' ? field : undefined;
}

/** The strings of a name list such as `funcname` or a DropStmt object: `[{String: {sval}}, ...]`. */
export function nameParts(list: readonly unknown[]): string[] {
  const parts: string[] = [];
  for (const item of list) {
    const part = stringOf(fieldsOf(item, 'String'), 'sval');
    if (part !== undefined) parts.push(part);
  }
  return parts;
}

/**
 * Whether a node `walkTree` visits is a SELECT: a wrapped `SelectStmt`, or the bare branches of a
 * set operation (`larg`, `rarg` of UNION, INTERSECT, EXCEPT), which hold their own INTO and
 * locking clauses.
 */
export function isSelectNode(key: string): boolean {
  return key === 'SelectStmt' || key === 'larg' || key === 'rarg';
}

/**
 * Calls `visit(key, fields)` for every object in the tree, parents before children. `key` is the
 * node kind for wrapped nodes (`FuncCall`) or the field name for bare ones (`relation`).
 * `visit` returns false to skip the children of that object.
 */
export function walkTree(
  root: unknown,
  visit: (key: string, fields: TreeFields) => boolean | void,
): void {
  const walk = (key: string, value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(key, item);
      return;
    }
    if (!isFields(value)) return;
    if (visit(key, value) === false) return;
    for (const child in value) {
      const childValue = value[child];
      if (typeof childValue === 'object' && childValue !== null) walk(child, childValue);
    }
  };
  walk('', root);
}
