/** A catalog as the catalog queries' rows make it, for the tests of the catalog and completion. */
import { catalogOf, type Catalog } from '../src/browser/catalog';

/** Rows of the three catalog queries, as sqlgate answers them (rowMode object). */
export const RELATION_ROWS = [
  {
    schema: 'public',
    schema_sql: 'public',
    name: 'users',
    name_sql: 'users',
    kind: 'r',
    estimate: -1,
    default_schema: 'public',
    columns: [{ name: 'id', sql: 'id', type: 'integer', notNull: true, default: null }],
  },
  {
    schema: 'shop',
    schema_sql: 'shop',
    name: 'Order Items',
    name_sql: '"Order Items"',
    kind: 'r',
    estimate: 1234.4,
    default_schema: 'public',
    columns: [
      {
        name: 'id',
        sql: 'id',
        type: 'integer',
        notNull: true,
        default: 'nextval(\'shop."Order Items_id_seq"\'::regclass)',
      },
      { name: 'user', sql: '"user"', type: 'integer', notNull: false, default: null },
    ],
  },
  {
    schema: 'shop',
    schema_sql: 'shop',
    name: 'totals',
    name_sql: 'totals',
    kind: 'm',
    estimate: 0,
    default_schema: 'public',
    columns: [],
  },
  {
    schema: 'shop',
    schema_sql: 'shop',
    name: 'recent',
    name_sql: 'recent',
    kind: 'v',
    estimate: -1,
    default_schema: 'public',
    columns: [{ name: 'id', sql: 'id', type: 'integer', notNull: false, default: null }],
  },
];

export const KEY_ROWS = [
  {
    schema: 'public',
    relation: 'users',
    type: 'i',
    name: 'users_pkey',
    columns: null,
    target: 'CREATE UNIQUE INDEX users_pkey ON public.users USING btree (id)',
  },
  {
    schema: 'public',
    relation: 'users',
    type: 'p',
    name: 'users_pkey',
    columns: ['id'],
    target: null,
  },
  {
    schema: 'shop',
    relation: 'Order Items',
    type: 'p',
    name: 'oi_pkey',
    columns: ['id'],
    target: null,
  },
  {
    schema: 'shop',
    relation: 'Order Items',
    type: 'f',
    name: 'oi_user_fkey',
    columns: ['user'],
    target: 'public.users(id)',
  },
  { schema: 'gone', relation: 'dropped', type: 'p', name: 'x', columns: ['id'], target: null },
];

export const FUNCTION_ROWS = [
  {
    schema: 'shop',
    schema_sql: 'shop',
    name: 'total',
    name_sql: 'total',
    kind: 'f',
    arguments: 'customer integer',
    result: 'numeric',
  },
  {
    schema: 'Reports',
    schema_sql: '"Reports"',
    name: 'run',
    name_sql: 'run',
    kind: 'p',
    arguments: '',
    result: '',
  },
];

export function sampleCatalog(): Catalog {
  return catalogOf(RELATION_ROWS, KEY_ROWS, FUNCTION_ROWS);
}
