import request from 'supertest';
import { createTestApp, database, target, type TestApp } from './support';

describe('POST /api/query, one statement, end to end', () => {
  let testApp: TestApp;
  beforeAll(() => {
    testApp = createTestApp();
  });
  afterAll(() => testApp.close());

  it('runs one statement on a pooled connection and returns a QueryExecutionResult', async () => {
    const response = await request(testApp.app)
      .post('/api/query')
      .send(target({ sql: 'SELECT 1 AS one' }))
      .expect(200);
    expect(response.body).toMatchObject({
      rows: [{ one: 1 }],
      rowCount: 1,
      command: 'SELECT',
      statement: 'SELECT 1 AS one',
      fields: [expect.objectContaining({ name: 'one', dataTypeID: 23, dataTypeName: 'int4' })],
    });
    expect(typeof response.body.executionTime).toBe('number');
    expect(response.body).not.toHaveProperty('multipleResults');
  });

  it('lists the pool it used under host:port:user:database', async () => {
    await request(testApp.app)
      .post('/api/query')
      .send(target({ sql: 'SELECT 1' }))
      .expect(200);
    const response = await request(testApp.app).get('/api/stats/pools').expect(200);
    const poolId = `${database.host}:${database.port}:${database.user}:${database.database}`;
    expect(response.body.stats).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          poolId,
          totalConnections: expect.any(Number),
          idleConnections: expect.any(Number),
          activeConnections: expect.any(Number),
          waitingClients: expect.any(Number),
        }),
      ]),
    );
  });

  it('is refused by PostgreSQL with a wrong password: the database uses password authentication', async () => {
    const response = await request(testApp.app)
      .post('/api/query')
      .send(target({ password: 'not-the-password', sql: 'SELECT 1' }))
      .expect(400);
    expect(response.body.error).toMatchObject({ code: '28P01', severity: 'FATAL' });
  });
});
