/**
 * docs/decisions.md 10.36, differentially against PostgreSQL: a read whose date/time input reads
 * a clock word ('now', 'today', 'tomorrow', 'yesterday'), in a parameter, behind escapes, through
 * a cast of a column or an expression, in an XMLTABLE column, or coerced implicitly, is never
 * answered from the cache.
 * Every form runs twice through the service with the cache on, with a step of PostgreSQL's own
 * clock in between (waited for, not assumed); the second answer must not come from the cache and
 * must lie between what PostgreSQL itself answers just before and just after it. Control forms,
 * whose value the clock cannot change, are still served from the cache.
 */
import request from 'supertest';
import { createTestApp, directClient, sql, target, type TestApp } from './support';

interface Form {
  name: string;
  sql: string;
  params?: unknown[];
}

const CLOCK_FORMS: Form[] = [
  ...['now', 'today', 'tomorrow', 'yesterday', ' Now '].map((word) => ({
    name: `a timestamptz parameter of ${JSON.stringify(word)}`,
    sql: 'SELECT $1::timestamptz AS v',
    params: [word],
  })),
  { name: "'now' in an E'' escape", sql: "SELECT E'no\\x77'::timestamptz AS v" },
  { name: "'now' in a U&'' escape", sql: "SELECT U&'n\\006Fw'::timestamptz AS v" },
  { name: 'a concatenation cast', sql: "SELECT ('n' || 'ow')::timestamptz AS v" },
  { name: 'a function result cast', sql: "SELECT concat('n', 'ow')::timestamptz AS v" },
  {
    name: "a text column holding 'now', cast",
    sql: 'SELECT note::timestamptz AS v FROM clock_notes',
  },
  { name: 'the same column, CAST', sql: 'SELECT CAST(note AS timestamptz) AS v FROM clock_notes' },
  {
    name: 'the same column, functional notation',
    sql: 'SELECT timestamptz(note) AS v FROM clock_notes',
  },
  {
    name: "an implicit coercion of 'now' in WHERE",
    sql: "SELECT count(*)::int AS v FROM clock_marks WHERE at > 'now'",
  },
  {
    name: 'an XMLTABLE column of timestamptz, whose path computes now',
    sql: `SELECT d AS v FROM XMLTABLE('/r' PASSING xmlparse(document '<r/>') COLUMNS d timestamptz PATH 'concat("no","w")')`,
  },
  {
    name: "an XMLTABLE column of a domain over timestamptz, read from a text column's document",
    sql: "SELECT d AS v FROM clock_notes, XMLTABLE('/r' PASSING xmlparse(document '<r>' || note || '</r>') COLUMNS d clock_moment PATH '.')",
  },
  {
    name: 'a composite with a timestamptz field, cast from a row of a text column',
    sql: 'SELECT (ROW(note)::clock_row).at AS v FROM clock_notes',
  },
  {
    name: 'jsonb_populate_record of a text column',
    sql: "SELECT (jsonb_populate_record(NULL::clock_row, jsonb_build_object('at', note))).at AS v FROM clock_notes",
  },
  { name: "date 'today'", sql: "SELECT date 'today' AS v" },
  { name: "timestamptz 'tomorrow'", sql: "SELECT timestamptz 'tomorrow' AS v" },
  { name: "'yesterday'::date", sql: "SELECT 'yesterday'::date AS v" },
];

const CONTROL_FORMS: Form[] = [
  { name: 'a date constant', sql: "SELECT '2024-01-01'::timestamptz AS v" },
  {
    name: 'a timestamptz parameter with an ISO value',
    sql: 'SELECT $1::timestamptz AS v',
    params: ['2024-01-01 12:00:00+00'],
  },
  {
    name: "a text parameter of 'now' (never read as a time)",
    sql: 'SELECT $1::text AS v',
    params: ['now'],
  },
  { name: 'a read with no date/time', sql: 'SELECT count(*)::int AS v FROM clock_notes' },
  {
    name: 'an XMLTABLE column of text (never read as a time)',
    sql: "SELECT d AS v FROM clock_notes, XMLTABLE('/r' PASSING xmlparse(document '<r>' || note || '</r>') COLUMNS d text PATH '.')",
  },
];

let testApp: TestApp;

interface Answer {
  v: unknown;
  type: string;
  cached: boolean;
  cacheStatus: string;
}

async function throughService(form: Form): Promise<Answer> {
  const response = await request(testApp.app)
    .post('/api/query')
    .send(target({ sql: form.sql, cache: true, ...(form.params ? { params: form.params } : {}) }));
  expect(response.status).toBe(200);
  const body = response.body as {
    rows: { v: unknown }[];
    fields: { dataTypeName: string }[];
    cached?: boolean;
    cacheStatus: string;
  };
  return {
    v: body.rows[0]?.v,
    type: body.fields[0]!.dataTypeName,
    cached: body.cached === true,
    cacheStatus: body.cacheStatus,
  };
}

/** The form's value as PostgreSQL's text, run directly. */
async function directly(form: Form): Promise<string> {
  const client = await directClient({ types: { getTypeParser: () => (text: string) => text } });
  try {
    const { rows } = await client.query(form.sql, form.params ?? []);
    return rows[0].v as string;
  } finally {
    await client.end();
  }
}

/** Whether PostgreSQL places `value` between `from` and `to` (either way round), as `type`. */
async function between(type: string, value: unknown, from: string, to: string): Promise<boolean> {
  const [row] = await sql(
    `SELECT $1::text::${type} BETWEEN SYMMETRIC $2::text::${type} AND $3::text::${type} AS inside`,
    [String(value), from, to],
  );
  return row!.inside as boolean;
}

/** Waits until PostgreSQL's clock has moved to a later second than it shows now. */
async function stepPostgresClock(): Promise<void> {
  const [start] = await sql(
    "SELECT date_trunc('second', clock_timestamp()) + interval '1 second' AS next",
  );
  for (;;) {
    const [now] = await sql('SELECT clock_timestamp() >= $1 AS passed', [start!.next]);
    if (now!.passed) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  await sql(`DROP TABLE IF EXISTS clock_notes, clock_marks;
    DROP DOMAIN IF EXISTS clock_moment;
    DROP TYPE IF EXISTS clock_row;
    CREATE DOMAIN clock_moment AS timestamptz;
    CREATE TYPE clock_row AS (at timestamptz);
    CREATE TABLE clock_notes (note text);
    INSERT INTO clock_notes VALUES ('now');
    CREATE TABLE clock_marks (at timestamptz);
    INSERT INTO clock_marks
      SELECT generate_series(date_trunc('second', now()), now() + interval '30 minutes', interval '1 second');`);
  testApp = createTestApp({ queryCacheTtlMs: 600_000 });
});

afterAll(async () => {
  await testApp.close();
  await sql('DROP TABLE IF EXISTS clock_notes, clock_marks');
  await sql('DROP DOMAIN IF EXISTS clock_moment; DROP TYPE IF EXISTS clock_row');
});

it('answers every clock form afresh after a step of the clock, as PostgreSQL does, and still caches the controls', async () => {
  const first = new Map<Form, Answer>();
  for (const form of [...CLOCK_FORMS, ...CONTROL_FORMS])
    first.set(form, await throughService(form));
  await stepPostgresClock();

  const wrong: string[] = [];
  for (const form of CLOCK_FORMS) {
    const before = await directly(form);
    const second = await throughService(form);
    const after = await directly(form);
    if (second.cached || second.cacheStatus === 'hit') {
      wrong.push(`${form.name}: served from the cache (${String(second.v)})`);
    } else if (!(await between(second.type, second.v, before, after))) {
      wrong.push(`${form.name}: ${String(second.v)}, PostgreSQL ${before} .. ${after}`);
    }
  }
  for (const form of CONTROL_FORMS) {
    const second = await throughService(form);
    if (second.cacheStatus !== 'hit' || second.v !== first.get(form)!.v) {
      wrong.push(`${form.name}: ${second.cacheStatus} ${String(second.v)}, expected a hit`);
    }
  }
  expect(wrong).toEqual([]);
}, 60_000);

it('says why a read of a clock parameter was not cached', async () => {
  const answer = await request(testApp.app)
    .post('/api/query')
    .send(target({ sql: 'SELECT $1::date AS v', params: ['today'], cache: true }));
  expect(answer.body).toMatchObject({ cacheStatus: 'bypass', cacheReason: 'volatile' });
  const again = await request(testApp.app)
    .post('/api/query')
    .send(target({ sql: 'SELECT $1::date AS v', params: ['today'], cache: true }));
  expect(again.body).toMatchObject({ cacheStatus: 'bypass', cacheReason: 'volatile' });
  expect(again.body.cached).toBeUndefined();
});
