/**
 * The database's catalog as the schema browser and the completion see it: schemas, their tables,
 * views, materialized views and foreign tables with columns, keys and indexes, and their functions.
 * Four pg_catalog queries read it in one read-only request (catalog-client.ts); this module holds
 * their text and shapes their rows. Pure: no DOM.
 */

export type RelationKind = 'table' | 'view' | 'materialized view' | 'foreign table';

export interface CatalogColumn {
  name: string;
  /** The name as SQL writes it: quoted by PostgreSQL's quote_ident when it needs to be. */
  sql: string;
  type: string;
  notNull: boolean;
  /** The default expression, as pg_get_expr prints it. */
  default: string | null;
  /** Part of the primary key. */
  primaryKey: boolean;
  /** The relation a foreign key of this column references, `schema.table(column)`. */
  references: string[];
}

export interface CatalogIndex {
  name: string;
  definition: string;
}

export interface CatalogRelation {
  schema: string;
  name: string;
  /** `schema.name`, each part quoted when it needs to be. */
  qualified: string;
  /** The name alone as SQL writes it. */
  sql: string;
  kind: RelationKind;
  /** pg_class.reltuples: null when the relation was never analysed (or has no storage). */
  estimatedRows: number | null;
  columns: CatalogColumn[];
  indexes: CatalogIndex[];
}

export interface CatalogFunction {
  schema: string;
  name: string;
  sql: string;
  qualified: string;
  arguments: string;
  result: string;
  kind: 'function' | 'procedure' | 'aggregate' | 'window';
}

export interface CatalogSchema {
  name: string;
  sql: string;
  relations: CatalogRelation[];
  functions: CatalogFunction[];
}

export interface Catalog {
  /** current_schema(): its names complete unqualified. */
  defaultSchema: string;
  schemas: CatalogSchema[];
  /**
   * Set when a limit (a key's maxRows rule, the server's MAX_ROWS or MAX_RESULT_BYTES) cut one of
   * the catalog's answers: what it lists is partial, `rows` rows of the answer cut.
   */
  truncated?: { rows: number; by: 'rows' | 'bytes' };
}

/** Schemas left out: PostgreSQL's own, TOAST and other sessions' temporary ones. */
const USER_SCHEMAS = (column: string): string =>
  `${column} NOT IN ('pg_catalog', 'information_schema') AND ${column} NOT LIKE 'pg\\_toast%' ` +
  `AND ${column} NOT LIKE 'pg\\_temp\\_%'`;

const RELATIONS_SQL = `SELECT n.nspname AS schema, quote_ident(n.nspname) AS schema_sql,
  c.relname AS name, quote_ident(c.relname) AS name_sql, c.relkind::text AS kind,
  c.reltuples::float8 AS estimate, current_schema() AS default_schema,
  coalesce((SELECT json_agg(json_build_object('name', a.attname, 'sql', quote_ident(a.attname),
      'type', format_type(a.atttypid, a.atttypmod), 'notNull', a.attnotnull,
      'default', pg_get_expr(d.adbin, d.adrelid)) ORDER BY a.attnum)
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]') AS columns
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${USER_SCHEMAS('n.nspname')}
ORDER BY n.nspname, c.relname`;

/** Primary and foreign keys (with the referenced relation), then every index's definition. */
const KEYS_SQL = `SELECT n.nspname AS schema, c.relname AS relation, k.contype::text AS type,
  k.conname AS name, (SELECT array_agg(a.attname::text ORDER BY u.ord)
    FROM unnest(k.conkey) WITH ORDINALITY AS u(num, ord)
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.num) AS columns,
  CASE WHEN k.contype = 'f' THEN quote_ident(rn.nspname) || '.' || quote_ident(rc.relname) || '('
    || (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY u.ord)
        FROM unnest(k.confkey) WITH ORDINALITY AS u(num, ord)
        JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.num) || ')' END AS target
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class rc ON rc.oid = k.confrelid LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
WHERE k.contype IN ('p', 'f') AND ${USER_SCHEMAS('n.nspname')}
UNION ALL
SELECT n.nspname, c.relname, 'i', ic.relname, NULL, pg_get_indexdef(i.indexrelid)
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_SCHEMAS('n.nspname')}
ORDER BY 1, 2, 3, 4`;

const FUNCTIONS_SQL = `SELECT n.nspname AS schema, quote_ident(n.nspname) AS schema_sql,
  p.proname AS name, quote_ident(p.proname) AS name_sql, p.prokind::text AS kind,
  pg_get_function_identity_arguments(p.oid) AS arguments,
  coalesce(pg_get_function_result(p.oid), '') AS result
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE ${USER_SCHEMAS('n.nspname')}
ORDER BY n.nspname, p.proname, 6`;

/** Every schema, empty ones too, and current_schema() even in a database with no relation. */
const SCHEMAS_SQL = `SELECT n.nspname AS schema, quote_ident(n.nspname) AS schema_sql,
  current_schema() AS default_schema
FROM pg_namespace n WHERE ${USER_SCHEMAS('n.nspname')} ORDER BY n.nspname`;

/** The four statements of one catalog request, in the order catalogOf reads their results. */
export const CATALOG_SQL = [RELATIONS_SQL, KEYS_SQL, FUNCTIONS_SQL, SCHEMAS_SQL].join(';\n');

type Row = Record<string, unknown>;

const RELATION_KINDS: Record<string, RelationKind> = {
  r: 'table',
  p: 'table',
  v: 'view',
  m: 'materialized view',
  f: 'foreign table',
};

const FUNCTION_KINDS: Record<string, CatalogFunction['kind']> = {
  f: 'function',
  p: 'procedure',
  a: 'aggregate',
  w: 'window',
};

const text = (value: unknown): string => (typeof value === 'string' ? value : String(value ?? ''));

function columnOf(value: unknown): CatalogColumn {
  const column = (typeof value === 'object' && value !== null ? value : {}) as Row;
  return {
    name: text(column.name),
    sql: text(column.sql),
    type: text(column.type),
    notNull: column.notNull === true,
    default: typeof column.default === 'string' ? column.default : null,
    primaryKey: false,
    references: [],
  };
}

/** reltuples is -1 for a table never analysed (PostgreSQL 14 and later), 0 before that. */
function estimateOf(value: unknown, kind: RelationKind): number | null {
  const estimate = Number(value);
  if (kind === 'view' || !Number.isFinite(estimate) || estimate < 0) return null;
  return Math.round(estimate);
}

function relationOf(row: Row): CatalogRelation {
  const kind = RELATION_KINDS[text(row.kind)] ?? 'table';
  const columns = Array.isArray(row.columns) ? row.columns.map(columnOf) : [];
  return {
    schema: text(row.schema),
    name: text(row.name),
    sql: text(row.name_sql),
    qualified: `${text(row.schema_sql)}.${text(row.name_sql)}`,
    kind,
    estimatedRows: estimateOf(row.estimate, kind),
    columns,
    indexes: [],
  };
}

/** Puts the keys and indexes of the second query's rows on the relations and columns they name. */
function addKeys(relations: Map<string, CatalogRelation>, rows: Row[]): void {
  for (const row of rows) {
    const relation = relations.get(`${text(row.schema)}\0${text(row.relation)}`);
    if (!relation) continue;
    const type = text(row.type);
    if (type === 'i') {
      relation.indexes.push({ name: text(row.name), definition: text(row.target) });
      continue;
    }
    const names = Array.isArray(row.columns) ? row.columns.map(text) : [];
    for (const column of relation.columns) {
      if (!names.includes(column.name)) continue;
      if (type === 'p') column.primaryKey = true;
      if (type === 'f') column.references.push(text(row.target));
    }
  }
}

function functionOf(row: Row): CatalogFunction {
  return {
    schema: text(row.schema),
    name: text(row.name),
    sql: text(row.name_sql),
    qualified: `${text(row.schema_sql)}.${text(row.name_sql)}`,
    arguments: text(row.arguments),
    result: text(row.result),
    kind: FUNCTION_KINDS[text(row.kind)] ?? 'function',
  };
}

/** The catalog from the rows of the four queries of CATALOG_SQL (rowMode object). */
export function catalogOf(
  relationRows: Row[],
  keyRows: Row[],
  functionRows: Row[],
  schemaRows: Row[] = [],
): Catalog {
  const schemas = new Map<string, CatalogSchema>();
  const schemaOf = (name: string, sql: string): CatalogSchema => {
    let schema = schemas.get(name);
    if (!schema) {
      schema = { name, sql, relations: [], functions: [] };
      schemas.set(name, schema);
    }
    return schema;
  };
  for (const row of schemaRows) schemaOf(text(row.schema), text(row.schema_sql));
  const relations = new Map<string, CatalogRelation>();
  for (const row of relationRows) {
    const relation = relationOf(row);
    relations.set(`${relation.schema}\0${relation.name}`, relation);
    schemaOf(relation.schema, text(row.schema_sql)).relations.push(relation);
  }
  addKeys(relations, keyRows);
  for (const row of functionRows) {
    schemaOf(text(row.schema), text(row.schema_sql)).functions.push(functionOf(row));
  }
  const defaultSchema = (schemaRows[0] ?? relationRows[0])?.default_schema;
  return {
    defaultSchema: typeof defaultSchema === 'string' ? defaultSchema : 'public',
    schemas: [...schemas.values()].sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/**
 * The catalog with only what matches `search` (case-insensitive, in a schema, relation, column or
 * function name): a relation that matches keeps all its columns, one that matches by a column
 * keeps the columns that match.
 */
export function filterCatalog(catalog: Catalog, search: string): Catalog {
  const needle = search.trim().toLowerCase();
  if (needle === '') return catalog;
  const hit = (name: string): boolean => name.toLowerCase().includes(needle);
  const schemas: CatalogSchema[] = [];
  for (const schema of catalog.schemas) {
    if (hit(schema.name)) {
      schemas.push(schema);
      continue;
    }
    const relations = schema.relations.flatMap((relation) => {
      if (hit(relation.name)) return [relation];
      const columns = relation.columns.filter((column) => hit(column.name));
      return columns.length > 0 ? [{ ...relation, columns }] : [];
    });
    const functions = schema.functions.filter((fn) => hit(fn.name));
    if (relations.length + functions.length > 0) schemas.push({ ...schema, relations, functions });
  }
  return { ...catalog, schemas };
}

/** How a relation is written in SQL from the default schema: qualified unless it lives there. */
export function relationReference(catalog: Catalog, relation: CatalogRelation): string {
  return relation.schema === catalog.defaultSchema ? relation.sql : relation.qualified;
}

/** The query a relation's "first rows" action runs. */
export function firstRowsSql(relation: CatalogRelation): string {
  return `SELECT * FROM ${relation.qualified} LIMIT 100;`;
}
