/**
 * The slow-query log and spans show statements with their literals replaced by `$n`, as
 * pg_stat_statements shows queries (docs/decisions.md 10.25). PostgreSQL is the oracle: each
 * statement runs on a cluster with pg_stat_statements loaded, and the text it records must equal
 * ours, except where the decision says how ours differs.
 */
import { splitSql, withLiteralsAsParameters } from '@sqlgate/core';
import { startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import { Client } from 'pg';

/** Statements whose literal-free text PostgreSQL and sqlgate agree on. */
const AGREED = [
  'SELECT 1',
  "SELECT 'text', 42, 4.5, 1e3, .5",
  "SELECT * FROM pg_class WHERE relname = 'pg_type' AND relpages > 0 LIMIT 10 OFFSET 5",
  "SELECT E'esc\\\\n', B'1010', X'ff', $$dollar$$, $q$tagged$q$",
  "SELECT interval '1 day', '2024-01-01'::date, CAST('7' AS int)",
  "SELECT relname FROM pg_class WHERE relname IN ('a', 'b', 'c')",
  "SELECT upper('x') || 'y' AS both",
  "SELECT 'line one'\n'line two'",
  "SELECT format('%s', 'x') WHERE 3 BETWEEN 1 AND 5",
];

/** Where ours differs, and how (decisions 10.25): keywords and minus signs stay. */
const DIFFERING: { sql: string; postgres: string; ours: string }[] = [
  { sql: 'SELECT true, false', postgres: 'SELECT $1, $2', ours: 'SELECT true, false' },
  { sql: 'SELECT -1', postgres: 'SELECT $1', ours: 'SELECT -$1' },
  {
    sql: "SELECT 'x'::varchar(10)",
    postgres: 'SELECT $1::varchar(10)',
    ours: 'SELECT $1::varchar($2)',
  },
  { sql: 'SELECT NULL', postgres: 'SELECT $1', ours: 'SELECT NULL' },
];

let cluster: LocalCluster;
let client: Client;

beforeAll(async () => {
  cluster = await startLocalCluster({
    tls: false,
    settings: { shared_preload_libraries: 'pg_stat_statements' },
  });
  client = new Client({
    host: cluster.host,
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    database: cluster.database,
  });
  await client.connect();
  await client.query('CREATE EXTENSION pg_stat_statements');
}, 60_000);

afterAll(async () => {
  await client?.end();
  await cluster?.stop();
});

/** The text pg_stat_statements recorded for `sql`, run alone after a reset. */
async function recordedText(sql: string): Promise<string> {
  await client.query('SELECT pg_stat_statements_reset()');
  await client.query(sql);
  const { rows } = await client.query<{ query: string }>(
    "SELECT query FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'",
  );
  expect(rows).toHaveLength(1);
  return (rows[0] as { query: string }).query;
}

/** sqlgate's text: the normalised statement, literals replaced. */
function oursOf(sql: string): string {
  const [statement] = splitSql(sql);
  return withLiteralsAsParameters(statement ?? '');
}

describe('literal-free statements against pg_stat_statements', () => {
  it.each(AGREED)('%s', async (sql) => {
    // The statements are written normalised already (single spaces, no comments), so
    // PostgreSQL's text, which keeps the submitted spacing, is comparable with ours.
    expect(oursOf(sql)).toBe(await recordedText(sql));
  });

  it.each(DIFFERING)('$sql differs as documented', async ({ sql, postgres, ours }) => {
    expect(await recordedText(sql)).toBe(postgres);
    expect(oursOf(sql)).toBe(ours);
  });
});
