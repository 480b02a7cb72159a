/** Shared set-up for HTTP tests: the app over the real adapter, pointed at the run's test database. */
import {
  testDatabaseFromEnvironment,
  type TestDatabase,
  type TestDatabaseSettings,
} from '@sqlgate/testing';
import type { QueryService } from '@sqlgate/core';
import express, { type Express } from 'express';
import { Client, type ClientConfig } from 'pg';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { createApp } from '../src/app';
import { loadConfig, type ServerConfig } from '../src/config';
import { createServiceFromConfig } from '../src/server';
import { inspectResponseBodies } from './response-inspector';

export const database: TestDatabaseSettings = testDatabaseFromEnvironment();

/** Connection fields of a POST /api/query body for the test database. */
export function target(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    ...overrides,
  };
}

export interface TestApp {
  app: Express;
  service: QueryService;
  close(): Promise<void>;
}

/** The app with its own pools; close it in afterAll. */
export function createTestApp(config: Partial<ServerConfig> = {}, logger?: Logger): TestApp {
  const service = createServiceFromConfig({ ...loadConfig({}), ...config });
  const inner = createApp({
    service,
    maxBodyBytes: config.maxBodyBytes ?? 1024 * 1024,
    ...(config.statsToken ? { statsToken: config.statsToken } : {}),
    ...(config.bodyTimeoutMs ? { bodyTimeoutMs: config.bodyTimeoutMs } : {}),
    ...(config.corsOrigins ? { corsOrigins: config.corsOrigins } : {}),
    ...(config.allowedHosts ? { allowedHosts: config.allowedHosts } : {}),
    ...(logger ? { logger } : {}),
  });
  // Every body the tests see passes the internal-message check (response-inspector.ts).
  const app = express();
  app.use(inspectResponseBodies, inner);
  return { app, service, close: () => service.close() };
}

/** A direct pg connection to the test database, for checking what the service did. */
export async function directClient(
  overrides: Partial<TestDatabaseSettings> & Pick<ClientConfig, 'types'> = {},
): Promise<Client> {
  const client = new Client({
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    ...overrides,
  });
  await client.connect();
  return client;
}

/** Runs SQL directly (setup and checks), outside the service. */
export async function sql(
  text: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const client = await directClient();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** A pino logger at `level` whose lines the test can read back as objects. */
export function captureLogs(level: string): {
  logger: pino.Logger;
  lines: () => Record<string, unknown>[];
} {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return {
    logger: pino({ level }, sink),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/**
 * A port on 127.0.0.1 that refuses connections. A privileged port: the kernel never hands it out
 * as an ephemeral one, so no server another test starts meanwhile can take it (a port found free
 * and closed again could be).
 */
export async function refusingPort(): Promise<number> {
  const port = 1;
  const refused = await new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
  if (!refused) throw new Error(`127.0.0.1:${port} does not refuse connections here`);
  return port;
}

/** Connection fields of a query body for a test's own cluster, without TLS. */
export function clusterTarget(
  cluster: TestDatabase,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    host: cluster.host,
    port: cluster.port,
    user: cluster.user,
    password: cluster.password,
    database: cluster.database,
    sslMode: 'disable',
    ...overrides,
  };
}

/**
 * A direct connection to a test's own cluster, for setup and for watching what the service does
 * (`observer` in pg_stat_activity). Its errors are ignored: tests restart the cluster under it.
 */
export async function connectObserver(cluster: TestDatabase): Promise<Client> {
  const client = new Client({
    ...clusterTarget(cluster),
    ssl: false,
    application_name: 'observer',
  } as ClientConfig);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Runs psql against the test database with `options` (output format, null marker...) and one
 * command, `ON_ERROR_STOP` set and no psqlrc read: psql is the oracle for values as PostgreSQL
 * prints them.
 */
export function psql(options: string[], command: string): SpawnSyncReturns<string> {
  return spawnSync(
    'psql',
    [
      '-X',
      '-q',
      ...options,
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      database.host,
      '-p',
      String(database.port),
      '-U',
      database.user,
      '-d',
      database.database,
      '-c',
      command,
    ],
    {
      env: { ...process.env, PGPASSWORD: database.password, PGSSLMODE: 'prefer' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}
