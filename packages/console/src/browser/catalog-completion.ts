/**
 * The catalog as the editor's completion takes it. @codemirror/lang-sql completes from a nested
 * namespace (its SQLConfig.schema): schema → relation → columns, each level an object whose keys
 * are the raw names, and `{self, children}` gives a level its own completion. With that shape it
 * resolves `alias.` to the relation the FROM clause gave the alias, and `schema.` to its relations.
 * Every completion carries the name as SQL must write it (`apply`, quoted by PostgreSQL's
 * quote_ident), since lang-sql alone would not quote a keyword such as "order". Relations and
 * functions of schemas other than the default also complete at the top level, applied qualified.
 * The types below are the structural subset of lang-sql's Completion and SQLNamespace, so this
 * module needs no import of CodeMirror and is tested in Node. Pure: no DOM.
 */
import type { Catalog, CatalogFunction, CatalogRelation } from './catalog';
import { visibleName } from './visible-text';

export interface NameCompletion {
  label: string;
  /** The label as lists show names (visible-text.ts), when it differs. */
  displayLabel?: string;
  type: string;
  detail?: string;
  apply?: string;
  /** Ranks the default schema's names above the same names of other schemas. */
  boost?: number;
}

export type Namespace =
  { [name: string]: Namespace } | { self: NameCompletion; children: Namespace } | NameCompletion[];

/** The completion of `name` written as `sql`: `apply` only when the two differ. */
function completion(name: string, sql: string, type: string, detail: string): NameCompletion {
  return withVisibleLabel(
    sql === name ? { label: name, type, detail } : { label: name, type, detail, apply: sql },
  );
}

/** A name holding bidirectional formatting characters is shown escaped, and inserted as it is. */
function withVisibleLabel(option: NameCompletion): NameCompletion {
  const shown = visibleName(option.label);
  const detail = option.detail === undefined ? undefined : visibleName(option.detail);
  return {
    ...option,
    ...(shown === option.label ? {} : { displayLabel: shown }),
    ...(detail === undefined ? {} : { detail }),
  };
}

/** lang-sql splits a namespace key at dots; a dot inside a name is escaped. */
function key(name: string): string {
  return name.replace(/\./g, '\\.');
}

function relationType(relation: CatalogRelation): string {
  return relation.kind === 'table' ? 'class' : 'interface';
}

function functionDetail(fn: CatalogFunction): string {
  return `${fn.kind}(${fn.arguments})${fn.result ? ` → ${fn.result}` : ''}`;
}

function relationLevel(relation: CatalogRelation): Namespace {
  return {
    self: completion(relation.name, relation.sql, relationType(relation), relation.kind),
    children: relation.columns.map((column) =>
      completion(column.name, column.sql, 'property', column.type),
    ),
  };
}

/** The nested namespace of the whole catalog, for lang-sql's `schema` option. */
export function catalogNamespace(catalog: Catalog): Namespace {
  const top: Record<string, Namespace> = {};
  for (const schema of catalog.schemas) {
    const children: Record<string, Namespace> = {};
    for (const relation of schema.relations) children[key(relation.name)] = relationLevel(relation);
    for (const fn of schema.functions) {
      // A relation of the same name keeps the key: `name.` completes its columns.
      children[key(fn.name)] ??= {
        self: completion(fn.name, fn.sql, 'function', functionDetail(fn)),
        children: [],
      };
    }
    top[key(schema.name)] = {
      self: completion(schema.name, schema.sql, 'namespace', 'schema'),
      children,
    };
  }
  return top;
}

/**
 * The relations and functions of the schemas other than the default, offered at the top level
 * under their own names and applied schema-qualified: `my_t` completes to `shop.my_table`.
 */
export function elsewhereCompletions(catalog: Catalog): NameCompletion[] {
  const options: NameCompletion[] = [];
  for (const schema of catalog.schemas) {
    if (schema.name === catalog.defaultSchema) continue;
    for (const relation of schema.relations) {
      options.push(
        withVisibleLabel({
          label: relation.name,
          type: relationType(relation),
          detail: `${schema.name} · ${relation.kind}`,
          apply: relation.qualified,
          boost: -1,
        }),
      );
    }
    for (const fn of schema.functions) {
      options.push(
        withVisibleLabel({
          label: fn.name,
          type: 'function',
          detail: `${schema.name} · ${functionDetail(fn)}`,
          apply: fn.qualified,
          boost: -1,
        }),
      );
    }
  }
  return options;
}
