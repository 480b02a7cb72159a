/**
 * PREPARED_STATEMENTS (docs/decisions.md 10.30) seen from HTTP: with one pooled connection, a read
 * sent twice is prepared once on it, unless the setting is off.
 */
import request from 'supertest';
import { loadConfig } from '../src/config';
import { createTestApp, target, type TestApp } from './support';

const NAMED =
  "SELECT statement, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements WHERE NOT from_sql AND statement NOT LIKE '%pg_prepared_statements%' ORDER BY statement";

async function namedAfterTwoRuns(testApp: TestApp): Promise<unknown> {
  const query = (sql: string) =>
    request(testApp.app).post('/api/query').send(target({ sql })).expect(200);
  await query('SELECT 41 + 1 AS answer');
  const second = await query('SELECT 41 + 1 AS answer');
  expect(second.body.rows).toEqual([{ answer: 42 }]);
  return (await query(NAMED)).body.rows;
}

describe('PREPARED_STATEMENTS', () => {
  it('is on by default, and off only when set off', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ PREPARED_STATEMENTS: 'off' }).preparedStatements).toBe(false);
    expect(() => loadConfig({ PREPARED_STATEMENTS: 'no' })).toThrow(/PREPARED_STATEMENTS/);
  });

  it('on: a read sent again runs the statement prepared the first time', async () => {
    const testApp = createTestApp({ poolMax: 1 });
    try {
      expect(await namedAfterTwoRuns(testApp)).toEqual([
        { statement: 'SELECT 41 + 1 AS answer', runs: 2 },
      ]);
    } finally {
      await testApp.close();
    }
  });

  it('off: nothing is prepared', async () => {
    const testApp = createTestApp({ poolMax: 1, preparedStatements: false });
    try {
      expect(await namedAfterTwoRuns(testApp)).toEqual([]);
    } finally {
      await testApp.close();
    }
  });

  describe('never fix a value PostgreSQL reads from a literal when it parses', () => {
    let testApp: TestApp;
    beforeAll(() => {
      // Two connections: a session keeps one for requests outside sessions.
      testApp = createTestApp({ poolMax: 2 });
    });
    afterAll(() => testApp.close());
    const query = (fields: Record<string, unknown>) =>
      request(testApp.app).post('/api/query').send(target(fields)).expect(200);

    it("'now' is read anew each time", async () => {
      const sql = "SELECT 'now'::timestamptz AS t";
      const first = (await query({ sql })).body.rows[0].t;
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = (await query({ sql })).body.rows[0].t;
      expect(second).not.toBe(first);
    });

    it('a session that changes TimeZone and DateStyle reads its literals under the new settings', async () => {
      const opened = await request(testApp.app).post('/api/sessions').send(target({})).expect(201);
      const path = `/api/sessions/${opened.body.sessionId}/query`;
      const inSession = async (sql: string) =>
        (await request(testApp.app).post(path).send({ sql }).expect(200)).body;
      try {
        const sql =
          "SELECT ('2024-01-01 12:00'::timestamptz AT TIME ZONE 'UTC')::text AS utc, '03/04/2024'::date::text AS d";
        await inSession("SET TimeZone = 'UTC'");
        expect((await inSession(sql)).rows).toEqual([
          { utc: '2024-01-01 12:00:00', d: '2024-03-04' },
        ]);
        expect((await inSession(sql)).rows).toEqual([
          { utc: '2024-01-01 12:00:00', d: '2024-03-04' },
        ]);
        await inSession("SET TimeZone = 'America/New_York'");
        await inSession("SET DateStyle = 'ISO, DMY'");
        // What psql answers after the same SETs.
        expect((await inSession(sql)).rows).toEqual([
          { utc: '2024-01-01 17:00:00', d: '2024-04-03' },
        ]);
      } finally {
        await request(testApp.app).delete(`/api/sessions/${opened.body.sessionId}`);
      }
    });
  });
});
