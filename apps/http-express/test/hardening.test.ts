/** Optional hardening, off by default: ALLOWED_TARGETS, STATS_TOKEN, and request logging. */
import request from 'supertest';
import { loadConfig } from '../src/config';
import { captureLogs, createTestApp, database, target } from './support';

describe('ALLOWED_TARGETS', () => {
  const appAllowing = (allowedTargets: string) => createTestApp({ allowedTargets });

  it('lets a target in an allowed range through', async () => {
    const testApp = appAllowing(`127.0.0.0/8`);
    try {
      await request(testApp.app)
        .post('/api/query')
        .send(target({ host: '127.0.0.1', sql: 'SELECT 1' }))
        .expect(200);
    } finally {
      await testApp.close();
    }
  });

  it("denies with 403 'Target not allowed' outside the list, for queries and connection tests", async () => {
    const testApp = appAllowing('10.0.0.0/8, db.example.invalid:5432');
    try {
      const response = await request(testApp.app)
        .post('/api/query')
        .send(target({ host: '127.0.0.1', sql: 'SELECT 1' }))
        .expect(403);
      expect(response.body).toEqual({ error: 'Target not allowed' });
      const check = await request(testApp.app)
        .post('/api/test-connection')
        .send(target({ host: '127.0.0.1' }))
        .expect(403);
      expect(check.body).toEqual({
        success: false,
        error: { message: 'Target not allowed', code: 'TARGET_NOT_ALLOWED' },
      });
    } finally {
      await testApp.close();
    }
  });

  it('resolves names before the check: a name that resolves to a denied address is denied', async () => {
    const testApp = appAllowing('10.0.0.0/8');
    try {
      await request(testApp.app)
        .post('/api/query')
        .send(target({ host: 'localhost', sql: 'SELECT 1' }))
        .expect(403);
    } finally {
      await testApp.close();
    }
  });

  it('honours the port of a host:port entry', async () => {
    const wrongPort = appAllowing(`127.0.0.1:${database.port + 1}`);
    const rightPort = appAllowing(`127.0.0.1:${database.port}`);
    try {
      await request(wrongPort.app)
        .post('/api/query')
        .send(target({ host: '127.0.0.1', sql: 'SELECT 1' }))
        .expect(403);
      await request(rightPort.app)
        .post('/api/query')
        .send(target({ host: '127.0.0.1', sql: 'SELECT 1' }))
        .expect(200);
    } finally {
      await wrongPort.close();
      await rightPort.close();
    }
  });

  it('stops start-up on a malformed list, naming the variable', () => {
    expect(() => loadConfig({ ALLOWED_TARGETS: '10.0.0.0/99' })).toThrow(
      /^ALLOWED_TARGETS must be/,
    );
  });
});

describe('STATS_TOKEN', () => {
  it('requires the Bearer token on the three statistics endpoints, and nowhere else', async () => {
    const testApp = createTestApp({ statsToken: 's3cret' });
    try {
      for (const [method, path] of [
        ['get', '/api/stats/pools'],
        ['get', '/api/stats/cache'],
        ['delete', '/api/stats/cache'],
      ] as const) {
        const denied = await request(testApp.app)[method](path).expect(401);
        expect(denied.body.error).toMatch(/Bearer/);
        await request(testApp.app)[method](path).set('Authorization', 'Bearer wrong').expect(401);
        await request(testApp.app)[method](path).set('Authorization', 'Bearer s3cret').expect(200);
      }
      await request(testApp.app).get('/healthz').expect(200);
    } finally {
      await testApp.close();
    }
  });

  it('is off by default', async () => {
    const testApp = createTestApp();
    try {
      await request(testApp.app).get('/api/stats/pools').expect(200);
    } finally {
      await testApp.close();
    }
  });
});

describe('request logging', () => {
  const capture = captureLogs;

  it('writes one JSON line per request with id, method, path, status and duration, and echoes the id', async () => {
    const { logger, lines } = capture('info');
    const testApp = createTestApp({}, logger);
    try {
      const response = await request(testApp.app)
        .post('/api/query')
        .set('X-Request-Id', 'caller-id-1')
        .send(target({ sql: 'SELECT 1' }))
        .expect(200);
      expect(response.headers['x-request-id']).toBe('caller-id-1');
      const generated = await request(testApp.app).get('/healthz').expect(200);
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(lines()).toEqual([
        expect.objectContaining({
          reqId: 'caller-id-1',
          method: 'POST',
          path: '/api/query',
          status: 200,
          durationMs: expect.any(Number),
        }),
        expect.objectContaining({
          reqId: generated.headers['x-request-id'],
          method: 'GET',
          path: '/healthz',
          status: 200,
        }),
      ]);
    } finally {
      await testApp.close();
    }
  });

  it('logs SQL only at debug, and never a password', async () => {
    const info = capture('info');
    const debug = capture('debug');
    for (const { logger } of [info, debug]) {
      const testApp = createTestApp({}, logger);
      try {
        await request(testApp.app)
          .post('/api/query')
          .send(target({ sql: 'SELECT 42 AS logged' }))
          .expect(200);
        await request(testApp.app)
          .post('/api/query')
          .send(target({ password: 'wrong-secret', sql: 'SELECT 1' }))
          .expect(400);
      } finally {
        await testApp.close();
      }
    }
    const infoText = JSON.stringify(info.lines());
    const debugText = JSON.stringify(debug.lines());
    expect(infoText).not.toContain('SELECT 42');
    expect(debugText).toContain('SELECT 42 AS logged');
    for (const text of [infoText, debugText]) {
      expect(text).not.toContain(database.password);
      expect(text).not.toContain('wrong-secret');
    }
  });
});
