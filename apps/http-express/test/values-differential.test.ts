/**
 * docs/decisions.md 10.14, proven rather than shown by examples: for every type of pg_type that
 * has values (base types, ranges, multiranges, enums, domains, composites and the arrays of each),
 * values with edge cases go through sqlgate (HTTP, both row modes, the response serializer
 * included) and each JSON value is compared with PostgreSQL's text of the same expression, under
 * the rule of its type: strings equal the text, numbers the text's number (integers digit for
 * digit), booleans t/f, json structurally with numbers as written, arrays element by element as
 * PostgreSQL itself decomposes them. The comparison runs again with DateStyle, IntervalStyle,
 * bytea_output, extra_float_digits and TimeZone set in the same request.
 */
import { spawnSync } from 'node:child_process';
import type { Client } from 'pg';
import request from 'supertest';
import { createTestApp, directClient, psql, target, type TestApp } from './support';
import { FIXTURES_SQL, loadCases, type TypeCase } from './values-differential/cases';
import { member, parseLossless, type JsonNode } from './values-differential/lossless-json';
import {
  acceptedExpressions,
  loadTypeInfo,
  oracleClient,
  oracleValues,
  valuesQuery,
} from './values-differential/oracle';
import {
  difference,
  isTextRule,
  ruleOf,
  type OracleValue,
  type Rule,
  type TypeInfo,
} from './values-differential/rules';

jest.setTimeout(180_000);

interface Variant {
  name: string;
  settings: string[];
}

const VARIANTS: Variant[] = [
  { name: 'server defaults', settings: [] },
  {
    name: 'SQL/DMY, sql_standard, escape, extra_float_digits 3, Asia/Kathmandu',
    settings: [
      "SET DateStyle = 'SQL, DMY'",
      "SET IntervalStyle = 'sql_standard'",
      "SET bytea_output = 'escape'",
      'SET extra_float_digits = 3',
      "SET TimeZone = 'Asia/Kathmandu'",
    ],
  },
  {
    name: 'German, iso_8601, hex, extra_float_digits -15, America/St_Johns',
    settings: [
      "SET DateStyle = 'German'",
      "SET IntervalStyle = 'iso_8601'",
      "SET bytea_output = 'hex'",
      'SET extra_float_digits = -15',
      "SET TimeZone = 'America/St_Johns'",
    ],
  },
];

/** Statements per request, and a bound on the SQL text of one request. */
const CASES_PER_REQUEST = 20;
const SQL_BYTES_PER_REQUEST = 400_000;

interface Case extends TypeCase {
  rule: Rule;
}

interface Difference {
  variant: string;
  rowMode: string;
  type: string;
  expression: string;
  text: string | null;
  got: string;
  why: string;
}

let testApp: TestApp;
let cases: Case[];
let types: Map<number, TypeInfo>;
/** Built-in types that are not arrays or composites and have no value here, for the report. */
let withoutValues: string[];

beforeAll(async () => {
  const setup = await directClient();
  try {
    await setup.query(FIXTURES_SQL);
  } finally {
    await setup.end();
  }
  testApp = createTestApp({ maxBodyBytes: 4 * 1024 * 1024 });
  const oracle = await oracleClient();
  try {
    types = await loadTypeInfo(oracle);
    cases = [];
    for (const each of await loadCases(oracle)) {
      const expressions = await acceptedExpressions(oracle, each.expressions);
      if (expressions.length > 0)
        cases.push({ ...each, expressions, rule: ruleOf(each.oid, types) });
    }
    const covered = new Set(cases.map((each) => each.oid));
    const builtin = await oracle.query<{ oid: string; typname: string }>(
      "SELECT oid, typname FROM pg_catalog.pg_type WHERE oid < 16384 AND typtype IN ('b', 'r', 'm', 'e', 'd') AND typname NOT LIKE '\\_%' ORDER BY oid",
    );
    withoutValues = builtin.rows
      .filter((row) => !covered.has(Number(row.oid)))
      .map((row) => row.typname);
  } finally {
    await oracle.end();
  }
});

afterAll(async () => {
  await testApp?.close();
  const cleanup = await directClient();
  await cleanup.query('DROP SCHEMA IF EXISTS diff_values CASCADE').finally(() => cleanup.end());
});

/** Requests of at most CASES_PER_REQUEST statements and SQL_BYTES_PER_REQUEST bytes. */
function requestGroups(all: readonly Case[]): Case[][] {
  const groups: Case[][] = [];
  let current: Case[] = [];
  let bytes = 0;
  for (const each of all) {
    const size = valuesQuery(each.expressions).length;
    if (
      current.length > 0 &&
      (current.length >= CASES_PER_REQUEST || bytes + size > SQL_BYTES_PER_REQUEST)
    ) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(each);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** The statement results of a response, single-statement or not, read without losing anything. */
function statementResults(body: string): JsonNode[] {
  const root = parseLossless(body);
  const results = member(root, 'results');
  return Array.isArray(results) ? results : [root];
}

async function compareThroughSqlgate(
  variant: Variant,
  rowMode: 'object' | 'array',
  expected: Map<Case, OracleValue[]>,
  differences: Difference[],
): Promise<number> {
  let compared = 0;
  for (const group of requestGroups(cases)) {
    const sql = [...variant.settings, ...group.map((each) => valuesQuery(each.expressions))].join(
      ';\n',
    );
    const response = await request(testApp.app)
      .post('/api/query')
      .send(target({ sql, rowMode, maxRows: 100_000 }));
    if (response.status !== 200)
      throw new Error(`sqlgate answered ${response.status}: ${response.text.slice(0, 500)}`);
    const results = statementResults(response.text).slice(variant.settings.length);
    group.forEach((each, position) => {
      const rows = member(results[position] as JsonNode, 'rows');
      const values = expected.get(each) as OracleValue[];
      if (!Array.isArray(rows) || rows.length !== values.length)
        throw new Error(`${each.name}: ${Array.isArray(rows) ? rows.length : 'no'} rows`);
      rows.forEach((row, i) => {
        const node =
          rowMode === 'object'
            ? (member(row, 'v') as JsonNode)
            : ((row as JsonNode[])[0] as JsonNode);
        const value = values[i] as OracleValue;
        compared++;
        const why = difference(node, value, each.rule);
        if (why)
          differences.push({
            variant: variant.name,
            rowMode,
            type: each.name,
            expression: (each.expressions[i] as string).slice(0, 200),
            text: value.text === null ? null : value.text.slice(0, 200),
            got: JSON.stringify(node)?.slice(0, 200) ?? 'undefined',
            why,
          });
      });
    });
  }
  return compared;
}

/** psql's own output for a sample of the values, to show the oracle's text is what psql prints. */
function psqlTexts(expressions: readonly string[]): (string | null)[] | undefined {
  const nullMarker = '\u0001null\u0001';
  const run = psql(['-A', '-t', '-z', '-0', '-P', `null=${nullMarker}`], valuesQuery(expressions));
  if (run.error || run.status !== 0) return undefined;
  // One column: each record ends with a zero byte, and the output with a newline.
  const output = run.stdout.replace(/\n$/, '');
  const records = (output.endsWith('\u0000') ? output.slice(0, -1) : output).split('\u0000');
  return records.map((record) => (record === nullMarker ? null : record));
}

it('returns every value of every type as psql prints it, in both row modes and under other session settings', async () => {
  const differences: Difference[] = [];
  let comparisons = 0;
  let valuesPerVariant = 0;
  let psqlChecked = 0;
  for (const variant of VARIANTS) {
    const oracle: Client = await oracleClient(variant.settings);
    const expected = new Map<Case, OracleValue[]>();
    try {
      for (const each of cases)
        expected.set(each, await oracleValues(oracle, each.expressions, each.rule, types));
    } finally {
      await oracle.end();
    }
    valuesPerVariant = [...expected.values()].reduce((sum, values) => sum + values.length, 0);
    if (variant.settings.length === 0) {
      for (const each of cases) {
        const printed = psqlTexts(each.expressions);
        if (!printed) continue;
        const texts = (expected.get(each) as OracleValue[]).map((value) => value.text);
        expect({ type: each.name, texts: printed }).toEqual({ type: each.name, texts });
        psqlChecked += texts.length;
      }
    }
    for (const rowMode of ['object', 'array'] as const)
      comparisons += await compareThroughSqlgate(variant, rowMode, expected, differences);
  }

  const kinds = new Map<string, number>();
  for (const each of cases) kinds.set(each.kind, (kinds.get(each.kind) ?? 0) + 1);
  const textRuleTypes = cases.filter((each) => isTextRule(each.rule)).map((each) => each.name);
  const summary = [
    '',
    'Values differential (sqlgate JSON vs PostgreSQL text):',
    `  types covered          ${cases.length} (${[...kinds].map(([kind, n]) => `${n} ${kind}`).join(', ')})`,
    `  values per settings    ${valuesPerVariant}`,
    `  values compared        ${comparisons} (${VARIANTS.length} settings variants x 2 row modes)`,
    `  checked against psql   ${psqlChecked}`,
    `  differences            ${differences.length}`,
    `  rule "PostgreSQL's text" (${textRuleTypes.length}; their arrays are arrays of that text): ${textRuleTypes.join(', ')}`,
    `  built-in types without a value here (${withoutValues.length}): ${withoutValues.join(', ')}`,
    '',
  ].join('\n');
  process.stdout.write(`${summary}\n`);
  if (differences.length > 0)
    process.stdout.write(
      `First differences:\n${JSON.stringify(differences.slice(0, 30), null, 2)}\n`,
    );

  expect(differences).toEqual([]);
  expect(cases.length).toBeGreaterThanOrEqual(80);
  expect(valuesPerVariant).toBeGreaterThanOrEqual(5_000);
  // psql is the oracle's witness wherever it is installed (PostgreSQL's client package).
  if (spawnSync('psql', ['--version']).status === 0) expect(psqlChecked).toBeGreaterThan(0);
});
