import {
  CATALOG_SQL,
  catalogOf,
  filterCatalog,
  firstRowsSql,
  relationReference,
  type CatalogRelation,
} from '../src/browser/catalog';
import { sampleCatalog } from './catalog-fixture';

describe('the catalog from the rows of its queries', () => {
  it('sends four statements', () => {
    expect(CATALOG_SQL.split(';\n')).toHaveLength(4);
  });

  it('lists every schema of the fourth query, empty ones too, with its current_schema()', () => {
    const catalog = catalogOf(
      [],
      [],
      [],
      [
        { schema: 'emptyschema', schema_sql: 'emptyschema', default_schema: 'work' },
        { schema: 'public', schema_sql: 'public', default_schema: 'work' },
      ],
    );
    expect(catalog.defaultSchema).toBe('work');
    expect(catalog.schemas).toEqual([
      { name: 'emptyschema', sql: 'emptyschema', relations: [], functions: [] },
      { name: 'public', sql: 'public', relations: [], functions: [] },
    ]);
  });

  it('groups relations and functions by schema, sorted, with the default schema', () => {
    const catalog = sampleCatalog();
    expect(catalog.defaultSchema).toBe('public');
    expect(catalog.schemas.map((schema) => schema.name)).toEqual(['public', 'Reports', 'shop']);
    const shop = catalog.schemas[2];
    expect(shop?.relations.map((relation) => [relation.name, relation.kind])).toEqual([
      ['Order Items', 'table'],
      ['totals', 'materialized view'],
      ['recent', 'view'],
    ]);
    expect(shop?.functions[0]).toMatchObject({ qualified: 'shop.total', kind: 'function' });
    expect(catalog.schemas[1]?.functions[0]).toMatchObject({
      qualified: '"Reports".run',
      kind: 'procedure',
    });
  });

  it('keeps estimates a table has, and none for one never analysed or a view', () => {
    const [users, items, totals, recent] = sampleCatalog().schemas.flatMap((s) => s.relations);
    expect(users?.estimatedRows).toBeNull();
    expect(items?.estimatedRows).toBe(1234);
    expect(totals?.estimatedRows).toBe(0);
    expect(recent?.estimatedRows).toBeNull();
  });

  it('puts primary keys, foreign keys and indexes on their relations and columns', () => {
    const catalog = sampleCatalog();
    const users = catalog.schemas[0]?.relations[0];
    expect(users?.columns[0]).toMatchObject({ primaryKey: true, references: [] });
    expect(users?.indexes).toEqual([
      {
        name: 'users_pkey',
        definition: 'CREATE UNIQUE INDEX users_pkey ON public.users USING btree (id)',
      },
    ]);
    const items = catalog.schemas[2]?.relations[0];
    expect(items?.qualified).toBe('shop."Order Items"');
    expect(
      items?.columns.map((column) => [column.sql, column.primaryKey, column.references]),
    ).toEqual([
      ['id', true, []],
      ['"user"', false, ['public.users(id)']],
    ]);
  });

  it('says public when there are no relations to tell the default schema', () => {
    expect(catalogOf([], [], []).defaultSchema).toBe('public');
  });
});

describe('the catalog filtered', () => {
  it('keeps a relation whole when its name matches, and only the matching columns otherwise', () => {
    const shown = filterCatalog(sampleCatalog(), 'USER');
    expect(
      shown.schemas.map((schema) => [
        schema.name,
        schema.relations.map((relation) => [relation.name, relation.columns.map((c) => c.name)]),
      ]),
    ).toEqual([
      ['public', [['users', ['id']]]],
      ['shop', [['Order Items', ['user']]]],
    ]);
  });

  it('keeps a schema whole when its name matches, and finds functions', () => {
    const shown = filterCatalog(sampleCatalog(), 'repo');
    expect(shown.schemas.map((schema) => schema.name)).toEqual(['Reports']);
    expect(filterCatalog(sampleCatalog(), 'tota').schemas[0]?.functions.map((f) => f.name)).toEqual(
      ['total'],
    );
    expect(filterCatalog(sampleCatalog(), 'nothing like it').schemas).toEqual([]);
  });

  it('is the whole catalog for an empty filter', () => {
    const catalog = sampleCatalog();
    expect(filterCatalog(catalog, '  ')).toBe(catalog);
  });
});

it('writes a relation qualified unless it lives in the default schema', () => {
  const catalog = sampleCatalog();
  const [users, items] = catalog.schemas.flatMap((schema) => schema.relations) as [
    CatalogRelation,
    CatalogRelation,
  ];
  expect(relationReference(catalog, users)).toBe('users');
  expect(relationReference(catalog, items)).toBe('shop."Order Items"');
  expect(firstRowsSql(items)).toBe('SELECT * FROM shop."Order Items" LIMIT 100;');
});
