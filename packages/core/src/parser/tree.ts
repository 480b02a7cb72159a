/**
 * The syntax tree from libpg-query (PostgreSQL's own parser compiled to WebAssembly). Its JSON is
 * read loosely as `unknown` and narrowed here: the parser only needs a few node kinds, and the
 * generated node types change with every PostgreSQL major version.
 */

type PgQueryModule = typeof import('libpg-query');

let pgQuery: PgQueryModule | null = null;
let loading: Promise<void> | null = null;

/** A node's fields: `{ relname: 't', ... }`. */
export type TreeFields = Readonly<Record<string, unknown>>;

/**
 * Loads PostgreSQL's parser (WebAssembly, about 1.8 MB). Call and await it once before `parseSql`;
 * further calls return the same promise. `splitSql` does not need it.
 *
 * @example
 * await loadParser();
 * const statements = parseSql('SELECT 1; UPDATE t SET a = 1');
 */
/** True once `loadParser()` has finished: a caller may skip awaiting it. */
export function parserLoaded(): boolean {
  return pgQuery !== null;
}

export function loadParser(): Promise<void> {
  if (loading === null) {
    loading = (async () => {
      // Required here, not at the top: requiring libpg-query starts compiling the WebAssembly module,
      // which callers that only split statements should not pay for.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const module = require('libpg-query') as PgQueryModule;
      await module.loadModule();
      pgQuery = module;
    })();
    // A failed load may be retried by calling loadParser() again.
    loading.catch(() => {
      loading = null;
    });
  }
  return loading;
}

/** Throws the error that tells the caller to load the parser first. */
export function assertParserLoaded(): void {
  if (pgQuery === null) {
    throw new Error(
      'The SQL parser is not loaded: await loadParser() once before calling parseSql() ' +
        '(splitSql() works without it).',
    );
  }
}

/**
 * The tree of the single statement `sql`, as `{ NodeKind: fields }`, or null when PostgreSQL's
 * grammar rejects it (syntax errors, psql variables, syntax newer than the bundled parser).
 */
export function parseStatementTree(sql: string): unknown {
  if (pgQuery === null) return null;
  try {
    const statements = pgQuery.parseSync(sql).stmts;
    if (statements === undefined || statements.length !== 1) return null;
    return statements[0]?.stmt ?? null;
  } catch {
    return null;
  }
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
