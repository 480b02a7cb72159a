/**
 * The schema browser: a collapsible panel beside the editor listing each schema's tables, views,
 * materialized views, foreign tables and functions, a relation's columns (type, NOT NULL, default,
 * primary key, the relation a foreign key references), its indexes and its estimated rows. A filter
 * box narrows the list; a name's button writes it into the editor at the cursor, a relation's ▶
 * button runs its first 100 rows. The catalog is read when the panel opens, kept per connection
 * (inspect-requests.ts CatalogCache), and read again by Refresh or after a run with DDL.
 */
import { h } from './dom';
import {
  filterCatalog,
  firstRowsSql,
  relationReference,
  type Catalog,
  type CatalogFunction,
  type CatalogRelation,
  type CatalogSchema,
} from './catalog';
import { CatalogCache, type RequestTarget } from './inspect-requests';
import { visibleName } from './visible-text';
import { changesCatalog } from './sql-text';

const OPEN_KEY = 'sqlgate.console.schemaPanel';

/** How long the connection form must stay still before an open panel reads the new catalog. */
const CONNECTION_SETTLE_MS = 600;

export interface SchemaViewOptions {
  /** The current connection as a request target; throws FormError when the form is incomplete. */
  target(): RequestTarget;
  /** Writes a name into the editor at the cursor. */
  insert(text: string): void;
  /** Runs `sql` (a relation's first rows). */
  run(sql: string): void;
  /** The catalog of the current connection changed (undefined: none read yet). */
  catalogChanged(catalog: Catalog | undefined): void;
}

const GROUPS: { title: string; kinds: CatalogRelation['kind'][] }[] = [
  { title: 'Tables', kinds: ['table'] },
  { title: 'Views', kinds: ['view'] },
  { title: 'Materialized views', kinds: ['materialized view'] },
  { title: 'Foreign tables', kinds: ['foreign table'] },
];

/** What the status adds when a limit cut the catalog: the list is partial. */
function truncationText(catalog: Catalog): string {
  const cut = catalog.truncated;
  if (!cut) return '';
  const limit = cut.by === 'bytes' ? 'a size limit' : 'a row limit';
  return ` · partial: the catalog was cut at ${plural(cut.rows, 'row')} by ${limit}`;
}

export class SchemaView {
  readonly element: HTMLElement;
  private readonly cache = new CatalogCache();
  private readonly tree = h('div', {
    className: 'schema-tree',
    attrs: { 'data-testid': 'schema-tree' },
  });
  private readonly status = h('div', { className: 'schema-status', attrs: { role: 'status' } });
  private readonly search = h('input', {
    className: 'schema-search',
    attrs: { type: 'search', placeholder: 'Filter', 'aria-label': 'Filter the schema' },
  });
  private readonly toggle = h('button', {
    className: 'schema-toggle',
    text: 'Schema',
    attrs: { type: 'button', 'data-testid': 'schema-toggle' },
  });
  private catalog: Catalog | undefined;
  /** Counts the reads started: only the latest one's answer is shown. */
  private reads = 0;
  private settle: ReturnType<typeof setTimeout> | undefined;
  /** The relations open in the list, `schema.name`. */
  private opened = new Set<string>();

  constructor(private readonly options: SchemaViewOptions) {
    const refresh = h('button', {
      text: 'Refresh',
      attrs: { type: 'button', 'data-testid': 'schema-refresh' },
      on: { click: () => this.refresh() },
    });
    this.element = h('aside', { className: 'schema-panel', attrs: { 'aria-label': 'Schema' } }, [
      h('div', { className: 'schema-head' }, [this.toggle, this.search, refresh]),
      this.status,
      this.tree,
    ]);
    this.toggle.addEventListener('click', () => this.setOpen(!this.isOpen()));
    this.search.addEventListener('input', () => this.render());
    this.setOpen(localStorage.getItem(OPEN_KEY) === 'open');
  }

  private isOpen(): boolean {
    return this.element.classList.contains('open');
  }

  private setOpen(open: boolean): void {
    this.element.classList.toggle('open', open);
    this.toggle.setAttribute('aria-expanded', String(open));
    localStorage.setItem(OPEN_KEY, open ? 'open' : 'closed');
    if (open && !this.catalog) void this.load(false);
  }

  /** The connection form changed: an open panel shows that connection's catalog once it settles. */
  connectionChanged(): void {
    clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      const target = this.targetOrNull();
      if (this.isOpen() || (target && this.cache.has(target))) void this.load(false);
      else this.show(undefined);
    }, CONNECTION_SETTLE_MS);
  }

  /** A run ended: after DDL, the catalog it may have changed is read again. */
  afterRun(sql: string): void {
    const target = this.targetOrNull();
    if (target && this.cache.has(target) && changesCatalog(sql)) void this.load(true);
  }

  private targetOrNull(): RequestTarget | null {
    try {
      return this.options.target();
    } catch {
      return null;
    }
  }

  /**
   * Refresh: reads the catalog again, unless a read of this connection is under way (its answer
   * is as new, and each read counts against a key's rate limit).
   */
  private refresh(): void {
    const target = this.targetOrNull();
    if (target && this.cache.reading(target)) return;
    void this.load(true);
  }

  /** Shows the current connection's catalog, read again when `reload`. */
  async load(reload: boolean): Promise<void> {
    const read = ++this.reads;
    let target: RequestTarget;
    try {
      target = this.options.target();
    } catch (error) {
      this.show(undefined, `The connection form is incomplete: ${(error as Error).message}`);
      return;
    }
    this.element.classList.add('loading');
    this.status.textContent = 'Reading the catalog…';
    try {
      const catalog = await this.cache.get(target, reload);
      if (read === this.reads) this.show(catalog);
    } catch (error) {
      if (read === this.reads)
        this.show(undefined, `The catalog could not be read: ${(error as Error).message}`);
    } finally {
      if (read === this.reads) this.element.classList.remove('loading');
    }
  }

  private show(catalog: Catalog | undefined, problem?: string): void {
    // The same catalog again (the connection came back): the tree stays as the user left it.
    if (catalog !== this.catalog || catalog === undefined) {
      this.catalog = catalog;
      this.options.catalogChanged(catalog);
    }
    this.render();
    if (problem) this.status.textContent = problem;
  }

  private render(): void {
    // What the user opened stays open when the list is made again (a reload, a new filter).
    this.opened = new Set(
      [...this.tree.querySelectorAll<HTMLElement>('details.schema-relation[open]')].map(
        (details) => details.dataset.relation ?? '',
      ),
    );
    this.tree.replaceChildren();
    if (!this.catalog) {
      this.status.textContent = '';
      return;
    }
    const filtering = this.search.value.trim() !== '';
    const shown = filterCatalog(this.catalog, this.search.value);
    const relations = shown.schemas.reduce((sum, schema) => sum + schema.relations.length, 0);
    this.status.textContent =
      (shown.schemas.length === 0
        ? filtering
          ? 'Nothing matches'
          : 'No schema in this database'
        : `${plural(shown.schemas.length, 'schema')}, ${plural(relations, 'relation')}`) +
      truncationText(this.catalog);
    for (const schema of shown.schemas) {
      this.tree.append(this.schemaNode(this.catalog, schema, filtering));
    }
  }

  private schemaNode(catalog: Catalog, schema: CatalogSchema, filtering: boolean): HTMLElement {
    const groups = GROUPS.map(({ title, kinds }) => {
      const relations = schema.relations.filter((relation) => kinds.includes(relation.kind));
      if (relations.length === 0) return null;
      return section(title, relations.length, filtering || title === 'Tables', () =>
        relations.map((relation) => this.relationNode(catalog, relation, filtering)),
      );
    });
    const functions =
      schema.functions.length === 0
        ? null
        : section('Functions', schema.functions.length, filtering, () =>
            schema.functions.map((fn) => this.functionNode(catalog, fn)),
          );
    const open = filtering || schema.name === catalog.defaultSchema || catalog.schemas.length < 4;
    return h(
      'details',
      {
        className: 'schema-schema',
        attrs: { 'data-schema': schema.name, ...(open ? { open: '' } : {}) },
      },
      [
        h('summary', {}, [
          this.nameButton(schema.name, schema.sql),
          h('span', { className: 'schema-kind', text: 'schema' }),
        ]),
        ...groups,
        functions,
      ],
    );
  }

  private relationNode(
    catalog: Catalog,
    relation: CatalogRelation,
    filtering: boolean,
  ): HTMLElement {
    const estimate =
      relation.estimatedRows === null ? '' : `~${relation.estimatedRows.toLocaleString('en')} rows`;
    const run = h('button', {
      className: 'schema-run',
      text: '▶',
      attrs: {
        type: 'button',
        title: `SELECT * FROM ${relation.qualified} LIMIT 100`,
        'aria-label': `First 100 rows of ${relation.qualified}`,
      },
    });
    run.addEventListener('click', (event) => {
      event.preventDefault();
      this.options.run(firstRowsSql(relation));
    });
    const details = h(
      'details',
      {
        className: 'schema-relation',
        attrs: { 'data-relation': `${relation.schema}.${relation.name}` },
      },
      [
        h('summary', {}, [
          this.nameButton(relation.name, relationReference(catalog, relation)),
          h('span', { className: 'schema-estimate', text: estimate }),
          run,
        ]),
      ],
    );
    // Columns are made when the relation is first opened: a catalog may hold thousands.
    const fill = (): void => {
      if (details.dataset.filled) return;
      details.dataset.filled = 'yes';
      details.append(columnList(relation, (text) => this.options.insert(text)));
      const indexes = indexList(relation);
      if (indexes) details.append(indexes);
    };
    details.addEventListener('toggle', () => details.open && fill());
    if (
      (filtering && relation.columns.length > 0) ||
      this.opened.has(details.dataset.relation ?? '')
    ) {
      details.open = true;
      fill();
    }
    return details;
  }

  private functionNode(catalog: Catalog, fn: CatalogFunction): HTMLElement {
    const written = fn.schema === catalog.defaultSchema ? fn.sql : fn.qualified;
    return h('div', { className: 'schema-function', attrs: { 'data-function': fn.name } }, [
      this.nameButton(fn.name, written),
      h('span', {
        className: 'schema-type',
        text: `(${fn.arguments})${fn.result ? ` → ${fn.result}` : ''}`,
      }),
    ]);
  }

  /** A name that, clicked, is written into the editor as `sql`. */
  private nameButton(name: string, sql: string): HTMLElement {
    const button = h('button', {
      className: 'schema-name',
      text: visibleName(name),
      attrs: { type: 'button', title: `Insert ${visibleName(sql)}` },
    });
    button.addEventListener('click', (event) => {
      // Inside a summary: writing the name must not also open or close the list.
      event.preventDefault();
      this.options.insert(sql);
    });
    return button;
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function section(
  title: string,
  count: number,
  open: boolean,
  items: () => HTMLElement[],
): HTMLElement {
  return h('details', { className: 'schema-group', attrs: open ? { open: '' } : {} }, [
    h('summary', { text: `${title} (${count})` }),
    ...items(),
  ]);
}

function columnList(relation: CatalogRelation, insert: (text: string) => void): HTMLElement {
  return h(
    'ul',
    { className: 'schema-columns' },
    relation.columns.map((column) => {
      const name = h('button', {
        className: 'schema-name',
        text: visibleName(column.name),
        attrs: { type: 'button', title: `Insert ${visibleName(column.sql)}` },
        on: { click: () => insert(column.sql) },
      });
      return h('li', { className: 'schema-column', attrs: { 'data-column': column.name } }, [
        name,
        h('span', { className: 'schema-type', text: column.type }),
        column.primaryKey ? h('span', { className: 'schema-badge pk', text: 'PK' }) : null,
        column.notNull && !column.primaryKey
          ? h('span', { className: 'schema-badge', text: 'NOT NULL' })
          : null,
        ...column.references.map((target) =>
          h('span', { className: 'schema-badge fk', text: `→ ${visibleName(target)}` }),
        ),
        column.default === null
          ? null
          : h('span', { className: 'schema-default', text: `= ${column.default}` }),
      ]);
    }),
  );
}

function indexList(relation: CatalogRelation): HTMLElement | null {
  if (relation.indexes.length === 0) return null;
  return h(
    'ul',
    { className: 'schema-indexes' },
    relation.indexes.map((index) =>
      h('li', { className: 'schema-index', attrs: { title: visibleName(index.definition) } }, [
        h('span', { className: 'schema-index-name', text: visibleName(index.name) }),
        // `CREATE [UNIQUE] INDEX name ON table USING btree (id)`: the method and the keys say most.
        h('span', {
          className: 'schema-type',
          text: visibleName(index.definition.replace(/^.*? USING /, '')),
        }),
      ]),
    ),
  );
}
