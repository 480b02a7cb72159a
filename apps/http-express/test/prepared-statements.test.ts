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
});
