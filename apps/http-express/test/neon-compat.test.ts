/**
 * POST /sql against the real clients (docs/interface.md, "POST /sql"): the stock Neon serverless
 * driver, drizzle-orm/neon-http and kysely-neon, each unmodified and in its own process
 * (neon-clients/workload.mjs), run a workload through sqlgate against the real PostgreSQL: every
 * common type read back equal to plain pg's reading, CRUD, the SQLSTATE of a failure reaching the
 * client's error, and batches that commit or roll back whole. Each runs on the Neon driver's
 * `neon()` and on @sqlgate/client's `sqlgate()`, its drop-in (the client must be built).
 */
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createTestApp, database, sql, type TestApp } from './support';

let testApp: TestApp;
let server: Server;
let url: string;

const DATABASE_URL =
  `postgresql://${encodeURIComponent(database.user)}:${encodeURIComponent(database.password ?? '')}` +
  `@${database.host}:${database.port}/${encodeURIComponent(database.database)}`;

/** Fresh tables: each driver's run counts what it wrote. */
async function freshTables(): Promise<void> {
  await sql(`
    DROP TABLE IF EXISTS neon_every_type, neon_item;
    DROP TYPE IF EXISTS neon_mood;
    CREATE TYPE neon_mood AS ENUM ('sad', 'ok', 'happy');
    CREATE TABLE neon_every_type (
      id serial PRIMARY KEY, i2 int2, i4 int4, i8 int8, num numeric(20, 6), f4 float4, f8 float8,
      b bool, t text, u uuid, d date, ts timestamp, tstz timestamptz, iv interval, j json, jb jsonb,
      by bytea, ia int[], ta text[], m neon_mood, n text);
    CREATE TABLE neon_item (id serial PRIMARY KEY, name text NOT NULL, qty int NOT NULL);
  `);
}

beforeAll(async () => {
  testApp = createTestApp();
  server = testApp.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await testApp.close();
});

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
type Checks = Record<string, { ok: boolean; value?: Json; error?: unknown }>;

/** Runs the workload of `client` in its own Node process; its checks as it saw them. */
function runWorkload(
  client: 'neon' | 'drizzle' | 'kysely' | 'drizzle-pool' | 'kysely-pool',
  driver: Driver,
): Promise<Checks> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(__dirname, 'neon-clients', 'workload.mjs'), client, driver],
      {
        env: { ...process.env, SQLGATE_URL: url, DATABASE_URL, TZ: 'UTC' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${client} workload exited with ${code}: ${err}`));
      else resolve(JSON.parse(out) as Checks);
    });
  });
}

/** Every check ran without throwing; the values are then judged one by one. */
function passed(checks: Checks): Record<string, Json> {
  const failed = Object.entries(checks).filter(([, check]) => !check.ok);
  expect(failed).toEqual([]);
  return Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check.value]));
}

type Driver = 'neon' | 'sqlgate';

// The workloads share the tables: run in order, in one file.
describe.each<Driver>(['neon', 'sqlgate'])('POST /sql through real clients on %s()', (driver) => {
  beforeAll(freshTables);

  it('the stock Neon driver: tagged templates, .query, every type as pg reads it, errors, transactions', async () => {
    const seen = passed(await runWorkload('neon', driver));
    expect(seen.select).toEqual([{ answer: 42, t: 'text' }]);
    expect(seen['types-read-equal-to-pg'].equal).toBe(true);
    expect(seen['types-read-equal-to-pg'].mine).toHaveLength(1);
    expect(seen['full-results']).toEqual({ command: 'UPDATE', rowCount: 0, fields: 0 });
    expect(seen['array-mode']).toEqual([[1, 2]]);
    expect(seen.fragments).toEqual([{ name: 'fragment', qty: 3 }]);
    expect(seen['error-sqlstate']).toEqual({
      isDriverError: true,
      code: '22012',
      message: 'division by zero',
    });
    expect(seen['transaction-commits']).toEqual({ returned: [{ qty: 2 }], visible: 2 });
    expect(seen['transaction-rolls-back']).toEqual({ code: '23502', left: 0 });
    // READ ONLY from Neon-Batch-Read-Only: the write fails with PostgreSQL's own error.
    expect(seen['transaction-options']).toEqual({ code: '25006' });
  });

  it('drizzle-orm/neon-http: CRUD, its own type parsers, errors with their SQLSTATE, batches', async () => {
    const seen = passed(await runWorkload('drizzle', driver));
    expect(seen.crud).toEqual({ read: { name: 'drizzle', qty: 5 }, after: 0 });
    expect(seen['types-read-equal-to-pg'].equal).toBe(true);
    expect(seen['error-sqlstate']).toMatchObject({ name: 'DrizzleQueryError', code: '23502' });
    expect(seen['batch-commits']).toBe(2);
    expect(seen['batch-rolls-back']).toEqual({
      failed: expect.objectContaining({ code: '22012' }),
      left: 0,
    });
  });

  it('kysely-neon: CRUD with affected row counts, errors with their SQLSTATE', async () => {
    const seen = passed(await runWorkload('kysely', driver));
    expect(seen.crud).toEqual({ updated: '1', read: { name: 'kysely', qty: 7 }, deleted: '1' });
    expect(seen['error-sqlstate']).toMatchObject({ code: '23502' });
  });
});

describe("@sqlgate/client's pg-compatible Pool under the node-postgres ORMs", () => {
  beforeAll(freshTables);

  it('drizzle-orm/node-postgres: CRUD, and db.transaction() committing (unseen elsewhere before) and rolling back', async () => {
    const seen = passed(await runWorkload('drizzle-pool', 'sqlgate'));
    expect(seen.crud).toEqual({ name: 'drizzle-pool', qty: 4 });
    expect(seen['transaction-commits-isolated']).toEqual({ mine: 1, elsewhere: 0, afterCommit: 1 });
    expect(seen['transaction-rolls-back']).toEqual({ message: 'changed my mind', left: 0 });
    expect(seen['error-sqlstate']).toMatchObject({ name: 'DrizzleQueryError', code: '23502' });
  });

  it("Kysely's PostgresDialect: CRUD, db.transaction() committing (unseen elsewhere before) and rolling back, .stream()", async () => {
    const seen = passed(await runWorkload('kysely-pool', 'sqlgate'));
    expect(seen.crud).toEqual({ updated: '1' });
    expect(seen['transaction-commits-isolated']).toEqual({ mine: 1, elsewhere: 0, afterCommit: 1 });
    expect(seen['transaction-rolls-back']).toEqual({ code: '23502', left: 0 });
    // .stream() through the client's Cursor (Kysely's `cursor` option): every row, in chunks.
    expect(seen.stream.streamed).toBe(seen.stream.rows);
    expect(seen.stream.rows).toBeGreaterThan(2);
  });
});
