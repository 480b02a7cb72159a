/**
 * Statements that look like reads but write take the transaction path (or fail with 25006 in a
 * READ ONLY transaction); they never write outside a transaction.
 */
import request from 'supertest';
import { createTestApp, sql, target, type TestApp } from './support';

let testApp: TestApp;
const query = (body: Record<string, unknown>) =>
  request(testApp.app).post('/api/query').send(target(body));

beforeAll(async () => {
  testApp = createTestApp();
  await sql(`DROP TABLE IF EXISTS disguised_t, disguised_t2; DROP SEQUENCE IF EXISTS disguised_s;
             CREATE TABLE disguised_t (id int); CREATE SEQUENCE disguised_s`);
});
afterAll(() => testApp.close());
beforeEach(() =>
  sql(
    'TRUNCATE disguised_t; INSERT INTO disguised_t VALUES (1), (2); DROP TABLE IF EXISTS disguised_t2',
  ),
);

/** Sends the statement with a second SELECT that fails: if it ran in the transaction, nothing stays. */
async function runWithFailingRead(statement: string) {
  return query({ sql: `${statement}; SELECT 1/0` });
}

it('WITH d AS (DELETE ... RETURNING *) SELECT ... is a write', async () => {
  const response = await runWithFailingRead(
    'WITH d AS (DELETE FROM disguised_t RETURNING *) SELECT count(*) FROM d',
  );
  expect(response.status).toBe(400);
  expect(response.body.transactionUsed).toBe(true);
  expect(await sql('SELECT count(*)::int AS n FROM disguised_t')).toEqual([{ n: 2 }]);
});

it('SELECT ... INTO is a write', async () => {
  const response = await runWithFailingRead('SELECT * INTO disguised_t2 FROM disguised_t');
  expect(response.body.transactionUsed).toBe(true);
  expect(await sql("SELECT to_regclass('disguised_t2') IS NULL AS absent")).toEqual([
    { absent: true },
  ]);
});

it('EXPLAIN ANALYZE DELETE is a write', async () => {
  const response = await runWithFailingRead('EXPLAIN ANALYZE DELETE FROM disguised_t');
  expect(response.body.transactionUsed).toBe(true);
  expect(await sql('SELECT count(*)::int AS n FROM disguised_t')).toEqual([{ n: 2 }]);
});

it("/* c */ select nextval('s') is a write", async () => {
  const response = await query({
    sql: "/* c */ select nextval('disguised_s'); SELECT 1 AS one",
  }).expect(200);
  expect(response.body.transactionUsed).toBe(true);
  expect(response.body.results[0].statement).toBe("select nextval('disguised_s');");
});

it('a write the classifier could not see fails with 25006 in a READ ONLY transaction instead of writing', async () => {
  await sql(
    `CREATE OR REPLACE FUNCTION disguised_delete() RETURNS int LANGUAGE sql AS 'DELETE FROM disguised_t RETURNING 1'`,
  );
  const response = await query({ sql: 'SELECT disguised_delete(); SELECT 1' }).expect(400);
  // A user-defined function may change the session, so the reads share one connection, in order.
  expect(response.body.cause.code).toBe('25006');
  expect(await sql('SELECT count(*)::int AS n FROM disguised_t')).toEqual([{ n: 2 }]);
});
