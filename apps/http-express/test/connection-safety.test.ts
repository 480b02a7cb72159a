/**
 * sqlgate connects only where the caller said, only as the caller said, and never with anything but the
 * caller's credentials (docs/decisions.md 6 and 7). No password ever leaves in a response, a
 * statistic or a log line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { createQueryService } from '@sqlgate/core';
import { createPostgresConnections } from '@sqlgate/postgres-adapter';
import { eventually, startLocalCluster, type LocalCluster } from '@sqlgate/testing';
import request from 'supertest';
import { createApp } from '../src/app';
import { createTestApp, database, sql, target, type TestApp } from './support';

const itWithTls = database.tls ? it : it.skip;
const itWithCertificate =
  database.tls && database.caCertificate && database.source === 'local-cluster' ? it : it.skip;
const describeWithLocalCluster = database.source === 'local-cluster' ? describe : describe.skip;

const SSL_SQL = 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()';
const poolId = `${database.host}:${database.port}:${database.user}:${database.database}`;

let testApp: TestApp;
const query = (app: TestApp, body: Record<string, unknown>) =>
  request(app.app).post('/api/query').send(body);
const pools = async (app: TestApp) =>
  (await request(app.app).get('/api/stats/pools').expect(200)).body.stats;

beforeAll(() => {
  testApp = createTestApp();
});
afterAll(() => testApp.close());

describe('pools are keyed by credentials', () => {
  it('a caller who knows host, user and database but not the password is refused by PostgreSQL (400, 28P01)', async () => {
    const app = createTestApp();
    try {
      // A pool opened with the right password, its connection idle and alive.
      await query(app, target({ sql: 'SELECT 1' })).expect(200);
      expect(await pools(app)).toEqual([
        expect.objectContaining({ poolId, totalConnections: 1, idleConnections: 1 }),
      ]);

      const wrong = await query(
        app,
        target({ password: 'not-the-password', sql: 'SELECT current_user' }),
      ).expect(400);
      expect(wrong.body.error).toMatchObject({
        code: '28P01',
        message: expect.stringMatching(/password authentication failed/),
      });
      const none = await query(
        app,
        target({ password: undefined, sql: 'SELECT current_user' }),
      ).expect(400);
      expect(none.body.error).toMatchObject({
        code: '28000',
        message: 'The server requires a password and none was given',
      });

      // The right password still gets the live pool; its poolId names no password.
      await query(app, target({ sql: 'SELECT 2' })).expect(200);
      const stats = await pools(app);
      expect(stats.map((stat: { poolId: string }) => stat.poolId)).toEqual([poolId]);
      expect(stats[0].totalConnections).toBeGreaterThanOrEqual(1);
    } finally {
      await app.close();
    }
  });
});

describe('only the named target, only the given credentials', () => {
  it('a Unix socket path as host is refused (400)', async () => {
    const response = await query(testApp, target({ host: '/tmp', sql: 'SELECT 1' })).expect(400);
    expect(response.body.error).toMatch(/socket/);
    await request(testApp.app)
      .post('/api/test-connection')
      .send(target({ host: '/var/run/postgresql' }))
      .expect(400);
  });

  it("the service's own PGPASSWORD, PGUSER, PGHOST, PGOPTIONS and ~/.pgpass are never used", async () => {
    const saved = { ...process.env };
    const home = await mkdtemp(path.join(os.tmpdir(), 'sqlgate-home-'));
    await writeFile(path.join(home, '.pgpass'), `*:*:*:*:${database.password}\n`, { mode: 0o600 });
    Object.assign(process.env, {
      HOME: home,
      PGPASSFILE: path.join(home, '.pgpass'),
      PGPASSWORD: database.password,
      PGUSER: database.user,
      PGHOST: database.host,
      PGPORT: String(database.port),
      PGDATABASE: database.database,
      PGOPTIONS: '-c search_path=evil',
      PGAPPNAME: 'evil',
      PGSSLMODE: 'disable',
    });
    const app = createTestApp();
    try {
      const withoutPassword = await query(
        app,
        target({ password: undefined, sql: 'SELECT current_user' }),
      ).expect(400);
      expect(withoutPassword.body.error.code).toBe('28000');
      const empty = await query(app, target({ password: '', sql: 'SELECT current_user' })).expect(
        400,
      );
      expect(empty.body.error.code).toBe('28000');
      const check = await request(app.app)
        .post('/api/test-connection')
        .send(target({ password: undefined }))
        .expect(400);
      expect(check.body).toEqual({
        success: false,
        error: { message: expect.any(String), code: '28000' },
      });

      // With the password, the session is the caller's, not shaped by the service's environment.
      const session = await query(
        app,
        target({
          sql: "SELECT current_setting('search_path') AS search_path, current_setting('application_name') AS application_name",
        }),
      ).expect(200);
      expect(session.body.rows).toEqual([
        { search_path: '"$user", public', application_name: 'sqlgate' },
      ]);
      if (database.tls) {
        // PGSSLMODE=disable does not turn off the TLS the request asked for.
        const ssl = await query(app, target({ sslMode: 'require', sql: SSL_SQL })).expect(200);
        expect(ssl.body.rows).toEqual([{ ssl: true }]);
      }
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
      await app.close();
      await rm(home, { recursive: true, force: true });
    }
  });

  it('fields beyond the documented ones never reach pg', async () => {
    const response = await query(
      testApp,
      target({
        options: '-c search_path=evil',
        connectionString: 'postgres://evil:evil@127.0.0.1:1/evil?options=-csearch_path%3Devil',
        ssl: { rejectUnauthorized: true },
        statement_timeout: 1,
        query_timeout: 1,
        application_name: 'evil',
        client_encoding: 'LATIN1',
        replication: 'database',
        binary: true,
        stream: 'evil',
        sql: `SELECT current_setting('search_path') AS search_path, current_setting('application_name') AS application_name,
          current_setting('statement_timeout') AS statement_timeout, current_setting('client_encoding') AS encoding,
          current_database() AS database, current_user AS "user", pg_sleep(0.01)::text AS slept`,
      }),
    ).expect(200);
    expect(response.body.rows).toEqual([
      {
        search_path: '"$user", public',
        application_name: 'sqlgate',
        statement_timeout: '0',
        encoding: 'UTF8',
        database: database.database,
        user: database.user,
        slept: '',
      },
    ]);
  });
});

describe('sslMode', () => {
  const sslOf = async (app: TestApp, overrides: Record<string, unknown>) => {
    const response = await query(app, target({ sql: SSL_SQL, ...overrides }));
    return {
      status: response.status,
      body: response.body,
      ssl: response.body.rows?.[0]?.ssl as boolean | undefined,
    };
  };

  itWithTls('disable is plain; require and prefer (the default) use TLS', async () => {
    expect((await sslOf(testApp, { sslMode: 'disable' })).ssl).toBe(false);
    expect((await sslOf(testApp, { sslMode: 'require' })).ssl).toBe(true);
    expect((await sslOf(testApp, { sslMode: 'prefer' })).ssl).toBe(true);
    expect((await sslOf(testApp, {})).ssl).toBe(true);
  });

  itWithTls(
    'sslMode is part of the pool key: a pool warmed with disable does not serve require',
    async () => {
      const app = createTestApp();
      try {
        expect((await sslOf(app, { sslMode: 'disable' })).ssl).toBe(false);
        expect((await sslOf(app, { sslMode: 'require' })).ssl).toBe(true);
        expect((await sslOf(app, { sslMode: 'disable' })).ssl).toBe(false);
        // Two pools, reported under the interface's single poolId.
        expect(await pools(app)).toEqual([
          expect.objectContaining({ poolId, totalConnections: 2 }),
        ]);
      } finally {
        await app.close();
      }
    },
  );

  itWithCertificate(
    'verify-full rejects the self-signed certificate unless its CA is configured',
    async () => {
      const untrusting = await sslOf(testApp, { host: 'localhost', sslMode: 'verify-full' });
      expect(untrusting.status).toBe(502);
      expect(untrusting.body.error.code).toMatch(/SELF_SIGNED/);

      const trusting = createTestApp({ sslRootCertificate: database.caCertificate });
      try {
        const verified = await sslOf(trusting, { host: 'localhost', sslMode: 'verify-full' });
        expect(verified).toMatchObject({ status: 200, ssl: true });
        // The certificate names localhost and 127.0.0.1; '127.1' reaches the same server under another name.
        const otherName = await sslOf(trusting, { host: '127.1', sslMode: 'verify-full' });
        expect(otherName.status).toBe(502);
        expect(otherName.body.error.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
      } finally {
        await trusting.close();
      }
    },
  );

  describeWithLocalCluster('against a server without TLS', () => {
    let plainCluster: LocalCluster;
    const plainTarget = (overrides: Record<string, unknown>) => ({
      host: plainCluster.host,
      port: plainCluster.port,
      user: plainCluster.user,
      password: plainCluster.password,
      database: plainCluster.database,
      sql: SSL_SQL,
      ...overrides,
    });

    beforeAll(async () => {
      plainCluster = await startLocalCluster({ tls: false });
    }, 60_000);
    afterAll(() => plainCluster?.stop());

    it('prefer falls back to plain, as libpq does', async () => {
      const app = createTestApp();
      try {
        for (let i = 0; i < 3; i++) {
          const response = await query(app, plainTarget({ sslMode: 'prefer' })).expect(200);
          expect(response.body.rows).toEqual([{ ssl: false }]);
        }
        const check = await request(app.app)
          .post('/api/test-connection')
          .send(plainTarget({ sslMode: 'prefer' }))
          .expect(200);
        expect(check.body).toMatchObject({ success: true, ssl: false });
      } finally {
        await app.close();
      }
    });

    it('require fails (502) and never falls back to plain', async () => {
      const app = createTestApp();
      try {
        const response = await query(app, plainTarget({ sslMode: 'require' })).expect(502);
        expect(response.body).toEqual({
          error: { message: expect.stringMatching(/SSL/), code: 'SSL_NOT_SUPPORTED' },
        });
        const again = await query(app, plainTarget({ sslMode: 'require' })).expect(502);
        expect(again.body.error.code).toBe('SSL_NOT_SUPPORTED');
        const verifyFull = await query(app, plainTarget({ sslMode: 'verify-full' })).expect(502);
        expect(verifyFull.body.error.code).toBe('SSL_NOT_SUPPORTED');
        const check = await request(app.app)
          .post('/api/test-connection')
          .send(plainTarget({ sslMode: 'require', sql: undefined }))
          .expect(502);
        expect(check.body).toEqual({
          success: false,
          error: { message: expect.any(String), code: 'SSL_NOT_SUPPORTED' },
        });
      } finally {
        await app.close();
      }
    });
  });
});

describe('no password in any response, statistic or log line', () => {
  it('after successes, refusals and unreachable targets', async () => {
    const logged: unknown[] = [];
    const service = createQueryService({
      connections: createPostgresConnections({
        connectTimeoutMs: 300,
        log: (...entry) => logged.push(entry),
      }),
    });
    const app = createApp({ service });
    const wrongPassword = `wrong-${database.password}-guess`;
    const silent = createServer((socket) => socket.on('error', () => undefined).resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    const texts: string[] = [];
    const record = (response: request.Response) =>
      texts.push(JSON.stringify(response.headers), response.text);
    try {
      for (const body of [
        target({ sql: 'SELECT 1' }),
        target({ sql: 'SELECT 1; SELECT 2' }),
        target({ sql: 'SELECT * FROM no_such_table' }),
        target({ password: wrongPassword, sql: 'SELECT 1' }),
        target({ password: undefined, sql: 'SELECT 1' }),
        target({ host: '127.0.0.1', port: 1, sql: 'SELECT 1' }),
        target({ host: '127.0.0.1', port: silentPort, sql: 'SELECT 1' }),
        target({ host: 'no-such-host.invalid', sql: 'SELECT 1' }),
      ]) {
        record(await request(app).post('/api/query').send(body));
        record(await request(app).post('/api/test-connection').send(body));
      }
      // An idle connection dropped by the server ends up in the log.
      const backend = await request(app)
        .post('/api/query')
        .send(target({ sql: 'SELECT pg_backend_pid() AS pid' }))
        .expect(200);
      record(backend);
      await sql('SELECT pg_terminate_backend($1)', [backend.body.rows[0].pid]);
      await eventually(() => logged.length > 0);
      record(await request(app).get('/api/stats/pools').expect(200));

      expect(logged.length).toBeGreaterThan(0);
      const everything = [...texts, inspect(logged, { showHidden: true, depth: 10 })].join('\n');
      expect(everything).not.toContain(database.password);
      expect(everything).not.toContain(wrongPassword);
    } finally {
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await service.close();
    }
  });
});
