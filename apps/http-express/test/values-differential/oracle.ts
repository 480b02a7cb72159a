/**
 * The oracle: PostgreSQL's own text for every value, read with a plain pg client whose type
 * parsers return the raw text for every OID. That is the text psql prints (psql -A shows
 * PQgetvalue as it is); the test confirms it against psql itself for the default settings.
 */
import type { Client, ClientConfig, QueryArrayResult } from 'pg';
import { directClient } from '../support';
import { literal } from './samples';
import type { OracleValue, Rule, TypeInfo } from './rules';

const RAW_TEXT = { getTypeParser: () => (text: string) => text };

/** A connection that returns every value as PostgreSQL's text, after `settings` (SET statements). */
export async function oracleClient(settings: readonly string[] = []): Promise<Client> {
  const client = await directClient({ types: RAW_TEXT as ClientConfig['types'] });
  for (const statement of settings) await client.query(statement);
  return client;
}

/** The statement sqlgate and the oracle both run: one column `v`, one row per expression, in order. */
export function valuesQuery(expressions: readonly string[]): string {
  return `SELECT x AS v FROM (VALUES ${expressions.map((e) => `(${e})`).join(', ')}) AS vals(x)`;
}

async function rowsOf(client: Client, text: string): Promise<unknown[][]> {
  const result: QueryArrayResult = await client.query({ text, rowMode: 'array' });
  return result.rows;
}

/** The expressions PostgreSQL accepts (one at a time only when the whole batch is refused). */
export async function acceptedExpressions(
  client: Client,
  expressions: readonly string[],
): Promise<string[]> {
  try {
    await client.query(valuesQuery(expressions));
    return [...expressions];
  } catch {
    const accepted: string[] = [];
    for (const expression of expressions) {
      try {
        await client.query(valuesQuery([expression]));
        accepted.push(expression);
      } catch {
        // Not a value of this type in this server (a literal the type does not take).
      }
    }
    return accepted;
  }
}

/** PostgreSQL's text for each expression; arrays also decomposed by PostgreSQL itself. */
export async function oracleValues(
  client: Client,
  expressions: readonly string[],
  rule: Rule,
  types: ReadonlyMap<number, TypeInfo>,
): Promise<OracleValue[]> {
  const texts = (await rowsOf(client, valuesQuery(expressions))).map(
    (row) => row[0] as string | null,
  );
  const values: OracleValue[] = texts.map((text) => ({ text }));
  if (rule.kind === 'array') await decompose(client, expressions, values, rule, types);
  return values;
}

/**
 * Adds array_dims and the elements (flattened in storage order, each as its element type's text)
 * to each array value; elements that are arrays themselves are decomposed in turn.
 */
async function decompose(
  client: Client,
  expressions: readonly string[],
  values: OracleValue[],
  rule: Extract<Rule, { kind: 'array' }>,
  types: ReadonlyMap<number, TypeInfo>,
): Promise<void> {
  const keyed = `(VALUES ${expressions.map((e, k) => `(${k}, ${e})`).join(', ')}) AS vals(k, x)`;
  const dims = await rowsOf(client, `SELECT array_dims(x) FROM ${keyed}`);
  dims.forEach((row, k) => {
    (values[k] as OracleValue).dims = row[0] as string | null;
    (values[k] as OracleValue).elements = [];
  });
  // A set-returning function in the select list keeps a composite element as one column.
  const elements = await rowsOf(client, `SELECT k, unnest(x) AS e FROM ${keyed}`);
  for (const [k, text] of elements)
    (values[Number(k)] as OracleValue).elements?.push({ text: text as string | null });
  if (rule.element.kind !== 'array') return;
  const elementType = types.get(rule.elementOid);
  if (!elementType) throw new Error(`No pg_type row for element ${rule.elementOid}`);
  const nested = values.flatMap((value) => value.elements ?? []).filter((e) => e.text !== null);
  if (nested.length === 0) return;
  await decompose(
    client,
    nested.map((e) => `${literal(e.text as string)}::${elementType.sqlName}`),
    nested,
    rule.element,
    types,
  );
}

/** Every type of pg_type with what the rules need to know. */
export async function loadTypeInfo(client: Client): Promise<Map<number, TypeInfo>> {
  const rows = await rowsOf(
    client,
    `SELECT oid::int4, typtype, typcategory, typelem::int4, typbasetype::int4, format_type(oid, NULL)
     FROM pg_catalog.pg_type`,
  );
  return new Map(
    rows.map(([oid, typtype, typcategory, typelem, typbasetype, sqlName]) => [
      Number(oid),
      {
        oid: Number(oid),
        typtype: String(typtype),
        typcategory: String(typcategory),
        typelem: Number(typelem),
        typbasetype: Number(typbasetype),
        sqlName: String(sqlName),
      },
    ]),
  );
}
