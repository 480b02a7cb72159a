import {
  NoTestDatabaseError,
  publishTestDatabase,
  startTestDatabase,
  TEST_DATABASE_SETTINGS_VARIABLE,
  testDatabaseFromEnvironment,
  type TestDatabaseSettings,
} from '@sqlgate/testing';
import { parseDatabaseUrl } from '../src/from-url';
import { withClient } from './connect';

const settings: TestDatabaseSettings = {
  host: '127.0.0.1',
  port: 6543,
  user: 'someone',
  password: 'p@ss word',
  database: 'somewhere',
  tls: true,
  caCertificate: '-----BEGIN CERTIFICATE-----\n…',
  connectionString: 'postgres://someone:p%40ss%20word@127.0.0.1:6543/somewhere',
  source: 'local-cluster',
};

describe('testDatabaseFromEnvironment', () => {
  it('reads what publishTestDatabase wrote, without methods', () => {
    const env: NodeJS.ProcessEnv = {};
    publishTestDatabase({ ...settings, stop: async () => undefined } as TestDatabaseSettings, env);
    expect(testDatabaseFromEnvironment(env)).toEqual(settings);
  });

  it('explains what is missing when no setup published a database', () => {
    expect(() => testDatabaseFromEnvironment({})).toThrow(
      new RegExp(`${TEST_DATABASE_SETTINGS_VARIABLE} is not set.*globalSetup`),
    );
  });

  it('refuses malformed settings', () => {
    const env = { [TEST_DATABASE_SETTINGS_VARIABLE]: JSON.stringify({ host: 'x' }) };
    expect(() => testDatabaseFromEnvironment(env)).toThrow(/does not hold test database settings/);
  });
});

describe('parseDatabaseUrl', () => {
  it('decodes every part', () => {
    expect(parseDatabaseUrl('postgresql://a%40b:p%2Fw@[::1]:6000/my%20db?sslmode=require')).toEqual(
      {
        host: '::1',
        port: 6000,
        user: 'a@b',
        password: 'p/w',
        database: 'my db',
        caFile: undefined,
      },
    );
  });

  it('applies the libpq defaults for port and database', () => {
    expect(parseDatabaseUrl('postgres://u:p@db.example/')).toMatchObject({
      port: 5432,
      database: 'u',
    });
  });

  it('refuses other schemes and host-less URLs', () => {
    expect(() => parseDatabaseUrl('mysql://u@h/d')).toThrow(/postgres:\/\//);
    expect(() => parseDatabaseUrl('postgres:///d')).toThrow(/must name a host/);
  });
});

describe('startTestDatabase with TEST_DATABASE_URL', () => {
  const published = testDatabaseFromEnvironment();
  const saved = process.env.TEST_DATABASE_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.TEST_DATABASE_URL;
    else process.env.TEST_DATABASE_URL = saved;
  });

  it('uses that database, finds out whether it offers TLS, and leaves it running on stop()', async () => {
    process.env.TEST_DATABASE_URL = published.connectionString;

    const database = await startTestDatabase();
    await database.stop();

    expect(database).toMatchObject({
      source: 'env',
      host: published.host,
      port: published.port,
      user: published.user,
      database: published.database,
      tls: published.tls,
      connectionString: published.connectionString,
    });
    expect(database.restart).toBeUndefined();
    const one = await withClient(database, { ssl: false }, (client) => client.query('SELECT 1'));
    expect(one.rowCount).toBe(1);
  });

  it('fails on an unreachable URL instead of silently starting another database', async () => {
    process.env.TEST_DATABASE_URL = 'postgres://u:p@127.0.0.1:1/d';
    await expect(startTestDatabase()).rejects.toThrow(
      /TEST_DATABASE_URL: cannot reach 127\.0\.0\.1:1/,
    );
  });
});

describe('NoTestDatabaseError', () => {
  it('names the three ways and why each failed, in one message', () => {
    const error = new NoTestDatabaseError({
      env: 'not set',
      testcontainers: 'no container engine available',
      localCluster: 'no initdb',
    });
    expect(error.message).toMatch(
      /1\. TEST_DATABASE_URL: not set\n.*2\. testcontainers: no container engine available\n.*3\. local cluster: no initdb/s,
    );
  });
});
