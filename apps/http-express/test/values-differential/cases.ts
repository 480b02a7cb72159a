/**
 * What the differential test compares: for every type in pg_type of the kinds it covers (base
 * types, ranges, multiranges, enums, domains, composites and the arrays of each), the SQL
 * expressions of its values.
 */
import type { Client } from 'pg';
import { arraySamples, builtinSamples, literal } from './samples';

export type TypeKind = 'base' | 'range' | 'multirange' | 'enum' | 'domain' | 'composite' | 'array';

export interface TypeCase {
  /** How the report names the type: its pg_type name, schema-qualified outside pg_catalog. */
  name: string;
  oid: number;
  kind: TypeKind;
  /** SQL expressions, each of this type. */
  expressions: string[];
}

export const FIXTURE_SCHEMA = 'diff_values';

/** Custom types for the kinds PostgreSQL has none of built in (enums) or few of. */
export const FIXTURES_SQL = `
DROP SCHEMA IF EXISTS diff_values CASCADE;
CREATE SCHEMA diff_values;
CREATE TYPE diff_values.diff_mood AS ENUM
  ('sad', 'a b', 'with,comma', 'with"quote', 'back\\slash', 'NULL', 'é😀', '{brace}', 'semi;colon', ' lead', '(paren)');
CREATE TYPE diff_values.diff_pair AS (a int, b text, c jsonb, d box, e int[], f float8);
CREATE DOMAIN diff_values.diff_positive AS int CHECK (VALUE > 0);
CREATE DOMAIN diff_values.diff_small AS diff_values.diff_positive CHECK (VALUE < 100000);
CREATE DOMAIN diff_values.diff_doc AS jsonb;
CREATE DOMAIN diff_values.diff_box AS box;
CREATE DOMAIN diff_values.diff_ints AS int[];
CREATE DOMAIN diff_values.diff_label AS text;
CREATE DOMAIN diff_values.diff_real AS float8;
CREATE TYPE diff_values.diff_floatrange AS RANGE (subtype = float8, multirange_type_name = diff_values.diff_floatmultirange);
CREATE TABLE diff_values."Weird, ""Name""" (x int);
CREATE TABLE diff_values.stats_source AS SELECT i % 10 AS a, i % 20 AS b FROM generate_series(1, 1000) i;
CREATE STATISTICS diff_values.diff_stats (ndistinct, dependencies, mcv) ON a, b FROM diff_values.stats_source;
ANALYZE diff_values.stats_source;
`;

/**
 * Catalog tables whose first rows (by oid, or by position for those without one) are created by
 * initdb and never change while tests run elsewhere in the same database: their row types are the
 * built-in composites compared.
 */
const STABLE_CATALOG_TABLES = [
  'pg_catalog.pg_type',
  'pg_catalog.pg_proc',
  'pg_catalog.pg_attribute',
  'pg_catalog.pg_operator',
  'pg_catalog.pg_am',
  'pg_catalog.pg_amop',
  'pg_catalog.pg_amproc',
  'pg_catalog.pg_cast',
  'pg_catalog.pg_collation',
  'pg_catalog.pg_conversion',
  'pg_catalog.pg_language',
  'pg_catalog.pg_namespace',
  'pg_catalog.pg_opclass',
  'pg_catalog.pg_opfamily',
  'pg_catalog.pg_aggregate',
  'pg_catalog.pg_ts_config',
  'pg_catalog.pg_ts_config_map',
  'pg_catalog.pg_ts_dict',
  'pg_catalog.pg_ts_parser',
  'pg_catalog.pg_ts_template',
  'pg_catalog.pg_range',
  'pg_catalog.pg_rewrite',
  'pg_catalog.pg_description',
  'pg_catalog.pg_tablespace',
  'pg_catalog.pg_index',
  'pg_catalog.pg_init_privs',
  'pg_catalog.pg_extension',
  'pg_catalog.pg_shdescription',
  'information_schema.sql_features',
  'information_schema.sql_implementation_info',
  'information_schema.sql_parts',
  'information_schema.sql_sizing',
];

const ROWS_PER_CATALOG_TABLE = 4;

interface TypeRow {
  oid: number;
  name: string;
  schema: string;
  typtype: string;
  typarray: number;
  relation: string | null;
  hasOid: boolean;
}

const TYPES_SQL = `SELECT t.oid::int4 AS oid, t.typname AS name, n.nspname AS schema, t.typtype,
  t.typarray::int4 AS typarray,
  CASE WHEN t.typrelid <> 0 THEN format('%I.%I', rn.nspname, r.relname) END AS relation,
  EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = t.typrelid AND a.attname = 'oid') AS "hasOid"
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
LEFT JOIN pg_catalog.pg_class r ON r.oid = t.typrelid
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = r.relnamespace
WHERE t.typtype IN ('b', 'r', 'm', 'e', 'd', 'c')
  AND (t.oid < 16384 OR n.nspname = '${FIXTURE_SCHEMA}')
  AND t.typisdefined
ORDER BY t.oid`;

const KIND: Record<string, TypeKind> = {
  b: 'base',
  r: 'range',
  m: 'multirange',
  e: 'enum',
  d: 'domain',
  c: 'composite',
};

/** Values of the fixture types, by type name. */
function fixtureSamples(): Map<string, string[]> {
  const labels = [
    'sad',
    'a b',
    'with,comma',
    'with"quote',
    'back\\slash',
    'NULL',
    'é😀',
    '{brace}',
    'semi;colon',
    ' lead',
    '(paren)',
  ];
  const q = (type: string) => (text: string) => `${literal(text)}::${FIXTURE_SCHEMA}.${type}`;
  const pairs = [
    "ROW(1, 'x y', '{\"k\": 1.10}', '((1,1),(0,0))', ARRAY[1, NULL], '-0')",
    'ROW(NULL, NULL, NULL, NULL, NULL, NULL)',
    "ROW(-2147483648, '', 'null', '(2,2),(1,1)', '{}', 'NaN')",
    "ROW(0, 'quote \" and \\\\ and ,()', '[12345678901234567890123]', NULL, '[2:3]={1,2}', '1e300')",
    "ROW(7, 'é😀\n', '\"NULL\"', NULL, ARRAY[1,2,3], 'Infinity')",
  ];
  return new Map([
    ['diff_mood', [`NULL::${FIXTURE_SCHEMA}.diff_mood`, ...labels.map(q('diff_mood'))]],
    [
      'diff_pair',
      [
        `NULL::${FIXTURE_SCHEMA}.diff_pair`,
        ...pairs.map((p) => `${p}::${FIXTURE_SCHEMA}.diff_pair`),
      ],
    ],
    ['diff_positive', ['1', '2147483647', '42'].map(q('diff_positive'))],
    ['diff_small', ['1', '99999'].map(q('diff_small'))],
    [
      'diff_doc',
      ['{"b": 1, "a": [1.10, 12345678901234567890123]}', '[]', '"x"', '-0'].map(q('diff_doc')),
    ],
    ['diff_box', ['((1,1),(0,0))', '(-1.5,2),(3,4e10)'].map(q('diff_box'))],
    ['diff_ints', ['{1,2,NULL}', '{}', '{{1,2},{3,4}}', '[0:1]={5,6}'].map(q('diff_ints'))],
    ['diff_label', ['', 'NULL', 'a,b;c', '"q"', 'back\\slash'].map(q('diff_label'))],
    ['diff_real', ['-0', 'NaN', '1.5', '-Infinity', '1e-300'].map(q('diff_real'))],
    [
      'diff_floatrange',
      ['empty', '[1.5,2.5)', '(,)', '[-0,1e300]', '(-Infinity,Infinity)'].map(q('diff_floatrange')),
    ],
    ['diff_floatmultirange', ['{}', '{[1.5,2.5),[3,)}'].map(q('diff_floatmultirange'))],
  ]);
}

/** Domains of information_schema, with values of their base types. */
const INFORMATION_SCHEMA_DOMAINS = new Map([
  ['cardinal_number', ['0', '1', '2147483647']],
  ['character_data', ['', 'x y', 'é😀', 'NULL']],
  ['sql_identifier', ['pg_class', 'Weird "Name"', '']],
  ['time_stamp', ['2024-02-29 12:34:56.789+00', 'infinity']],
  ['yes_or_no', ['YES', 'NO']],
]);

/** Every case: the types of pg_type that have values, each with its array type. */
export async function loadCases(client: Client): Promise<TypeCase[]> {
  // The oracle's client reads every value as text: numbers and booleans are converted here.
  const raw = await client.query<Record<keyof TypeRow, string | null>>(TYPES_SQL);
  const rows: TypeRow[] = raw.rows.map((row) => ({
    oid: Number(row.oid),
    name: String(row.name),
    schema: String(row.schema),
    typtype: String(row.typtype),
    typarray: Number(row.typarray),
    relation: row.relation,
    hasOid: row.hasOid === 't',
  }));
  const byOid = new Map(rows.map((row) => [row.oid, row]));
  const builtins = builtinSamples();
  const fixtures = fixtureSamples();
  const cases: TypeCase[] = [];
  const stableTables = new Set(STABLE_CATALOG_TABLES);

  for (const row of rows) {
    if (row.name.startsWith('_') && !row.relation && row.typtype === 'b') continue; // arrays: below
    let expressions: string[] | undefined;
    let castName: string;
    if (row.schema === FIXTURE_SCHEMA) {
      expressions = fixtures.get(row.name);
      castName = `${FIXTURE_SCHEMA}.${row.name}`;
    } else if (row.schema === 'information_schema' && row.typtype === 'd') {
      const values = INFORMATION_SCHEMA_DOMAINS.get(row.name);
      castName = `information_schema.${row.name}`;
      expressions = values && [
        `NULL::${castName}`,
        ...values.map((v) => `${literal(v)}::${castName}`),
      ];
    } else if (row.typtype === 'c') {
      if (!row.relation || !stableTables.has(row.relation)) continue;
      const order = row.hasOid ? 'oid' : 'ctid';
      const select = (limit: number, offset: number) =>
        `SELECT t FROM ${row.relation} t ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
      castName = `${row.relation}`;
      expressions = Array.from({ length: ROWS_PER_CATALOG_TABLE }, (_, k) => `(${select(1, k)})`);
      cases.push({ name: typeName(row), oid: row.oid, kind: 'composite', expressions });
      const arrayRow = byOid.get(row.typarray);
      if (arrayRow) {
        cases.push({
          name: typeName(arrayRow),
          oid: arrayRow.oid,
          kind: 'array',
          expressions: [
            `ARRAY(${select(3, 0)})`,
            `ARRAY(${select(1, 3)})`,
            `ARRAY(SELECT t FROM ${row.relation} t WHERE false)`,
          ],
        });
      }
      continue;
    } else {
      expressions = builtins.get(row.name);
      castName = row.name === 'char' ? '"char"' : row.name;
    }
    if (!expressions || expressions.length === 0) continue;
    cases.push({
      name: typeName(row),
      oid: row.oid,
      kind: KIND[row.typtype] ?? 'base',
      expressions,
    });
    const arrayRow = byOid.get(row.typarray);
    if (arrayRow) {
      cases.push({
        name: typeName(arrayRow),
        oid: arrayRow.oid,
        kind: 'array',
        expressions: arraySamples(`${castName}[]`, expressions),
      });
    }
  }
  return cases;
}

function typeName(row: TypeRow): string {
  return row.schema === 'pg_catalog' ? row.name : `${row.schema}.${row.name}`;
}
