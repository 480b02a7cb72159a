/**
 * docs/decisions.md 10.13 and 10.14: the values a field report found changed on the way through.
 * Each comes back as PostgreSQL prints it: json text spliced into the response unparsed, arrays with
 * their own delimiter and bounds, vectors as arrays of numbers, -0 as -0.
 */
import request from 'supertest';
import { createTestApp, directClient, sql, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

/** PostgreSQL's text of `expression`, as psql prints it. */
async function textOf(expression: string): Promise<string> {
  const client = await directClient();
  try {
    const { rows } = await client.query<{ t: string }>(`SELECT (${expression})::text AS t`);
    return rows[0]?.t as string;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  testApp = createTestApp();
  await sql('DROP TABLE IF EXISTS value_regression; CREATE TABLE value_regression (id int)');
});
afterAll(() => testApp.close());

describe('json and jsonb are PostgreSQL text, spliced unparsed', () => {
  it.each([
    ["'12345678901234567890123'::jsonb", '12345678901234567890123'],
    ["'[1e400]'::jsonb", null],
    ["'[1e400]'::json", '[1e400]'],
    ["'1.10'::json", '1.10'],
    [`'{"b":1,"a":2,"b":3,"2":0,"1":0}'::json`, '{"b":1,"a":2,"b":3,"2":0,"1":0}'],
    [`'{"b":1,"a":2,"2":0,"1":0}'::jsonb`, '{"1": 0, "2": 0, "a": 2, "b": 1}'],
    [`'{"s": "\\u00e9 \\ud83d\\ude00 \\"q\\""}'::jsonb`, null],
  ])('%s', async (expression, expected) => {
    const text = await textOf(expression);
    if (expected !== null) expect(text).toBe(expected);
    for (const rowMode of ['object', 'array'] as const) {
      const response = await query({ sql: `SELECT ${expression} AS v`, rowMode }).expect(200);
      const row = rowMode === 'object' ? `{"v":${text}}` : `[${text}]`;
      expect(response.text).toContain(`"rows":[${row}]`);
    }
  });

  it('answers 200 with a 6000-deep jsonb, its text spliced', async () => {
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    const response = await query({
      sql: "SELECT (repeat('[',6000)||repeat(']',6000))::jsonb AS v",
    }).expect(200);
    expect(response.text).toContain(`"rows":[{"v":${deep}}]`);
  });

  it('splices json elements of arrays raw too', async () => {
    const response = await query({
      sql: `SELECT ARRAY['{"n": 1.10}'::json, NULL, '[12345678901234567890123]'] AS v`,
    }).expect(200);
    expect(response.text).toContain('"rows":[{"v":[{"n": 1.10},null,[12345678901234567890123]]}]');
  });

  it('caches json values and serves them spliced the same way', async () => {
    const body = { sql: "SELECT '{\"x\": 1.10}'::jsonb AS v, '-0'::float8 AS z", cache: true };
    const first = await query(body).expect(200);
    const second = await query(body).expect(200);
    expect(first.body.cached).toBeUndefined();
    expect(second.body.cached).toBe(true);
    for (const response of [first, second])
      expect(response.text).toContain('"rows":[{"v":{"x": 1.10},"z":-0}]');
  });
});

describe('arrays, vectors and floats', () => {
  it('splits a box array at the box delimiter', async () => {
    const response = await query({
      sql: "SELECT ARRAY[box '((1,1),(0,0))', box '((2,2),(1,1))'] AS v",
    }).expect(200);
    expect(response.body.rows[0].v).toEqual(['(1,1),(0,0)', '(2,2),(1,1)']);
  });

  it('keeps an array with other lower bounds as PostgreSQL prints it', async () => {
    const response = await query({ sql: "SELECT '[2:3]={1,2}'::int[] AS v" }).expect(200);
    expect(response.body.rows[0].v).toBe('[2:3]={1,2}');
  });

  it('keeps the sign of a float -0 and leaves NaN and infinities as text', async () => {
    const response = await query({
      sql: "SELECT '-0'::float8 AS a, '-0'::float4 AS b, ARRAY['-0'::float8, 'NaN', '-Infinity'] AS c",
    }).expect(200);
    expect(response.text).toContain('"rows":[{"a":-0,"b":-0,"c":[-0,"NaN","-Infinity"]}]');
    expect(Object.is(response.body.rows[0].a, -0)).toBe(true);
  });

  it('makes int2vector and oidvector arrays of numbers', async () => {
    const response = await query({
      sql: "SELECT '1 2'::int2vector AS i, '23 26'::oidvector AS o, ''::int2vector AS e, ARRAY['1 2'::int2vector, '3'] AS a",
    }).expect(200);
    expect(response.body.rows[0]).toEqual({ i: [1, 2], o: [23, 26], e: [], a: [[1, 2], [3]] });
  });

  it('answers an INSERT followed by an int2vector SELECT with both results', async () => {
    const response = await query({
      sql: "INSERT INTO value_regression VALUES (1); SELECT '1 2'::int2vector AS v",
    }).expect(200);
    expect(response.body.results[0].rowCount).toBe(1);
    expect(response.body.results[1].rows).toEqual([{ v: [1, 2] }]);
  });

  it('reads pg_proc and pg_index, whose columns are vectors', async () => {
    const procs = await query({
      sql: "SELECT * FROM pg_proc WHERE proname = 'int4pl'",
    }).expect(200);
    expect(procs.body.rows[0].proargtypes).toEqual([23, 23]);
    const all = await query({ sql: 'SELECT * FROM pg_proc', maxRows: 100000 }).expect(200);
    expect(all.body.rows.length).toBeGreaterThan(2000);
    const indexes = await query({
      sql: "SELECT indkey, indclass FROM pg_index WHERE indexrelid = 'pg_class_oid_index'::regclass",
    }).expect(200);
    expect(indexes.body.rows[0].indkey).toEqual([1]);
    expect(indexes.body.rows[0].indclass).toEqual([expect.any(Number)]);
  });
});
