/**
 * docs/decisions.md 10.20: cache correctness before cache precision. A cached read never outlives
 * a write made through sqlgate to its database, whoever wrote it, however the host was spelled,
 * whatever the sslMode, and whichever relations the write reached without naming them (triggers,
 * foreign-key cascades, TRUNCATE ... CASCADE, views in both directions).
 */
import request from 'supertest';
import { createTestApp, database, sql, target, type TestApp } from './support';

let testApp: TestApp;
/** A second database of the test server (a throwaway cluster has `postgres`); else the same one. */
const OTHER_DATABASE = database.source === 'local-cluster' ? 'postgres' : database.database;

interface Caller {
  name: string;
  user: string;
  password: string;
  host: string;
  sslMode: string;
  /** Another database of the same server; the test database when absent. */
  database?: string;
}

/** Two users on two spellings of one server, with two sslModes. */
const ALICE: Caller = {
  name: 'alice via localhost, sslMode disable',
  user: 'cc_alice',
  password: 'alice-pw',
  host: 'localhost',
  sslMode: 'disable',
};
const BOB: Caller = {
  name: 'bob via 127.0.0.1, sslMode prefer',
  user: 'cc_bob',
  password: 'bob-pw',
  host: '127.0.0.1',
  sslMode: 'prefer',
};

const post = (caller: Caller, body: Record<string, unknown>) =>
  request(testApp.app)
    .post('/api/query')
    .send(
      target({
        user: caller.user,
        password: caller.password,
        host: caller.host,
        sslMode: caller.sslMode,
        ...(caller.database ? { database: caller.database } : {}),
        ...body,
      }),
    );

async function read(caller: Caller, text: string) {
  const response = await post(caller, { sql: text, cache: true });
  expect(response.status).toBe(200);
  return response.body as { rows: Record<string, unknown>[]; cached?: boolean };
}

async function write(caller: Caller, text: string): Promise<void> {
  const response = await post(caller, { sql: text });
  expect(response.status).toBe(200);
}

/**
 * Caches `check` for `reader` (proving it is served from the cache), lets `writer` run `change`,
 * then reads again: the result must be fresh.
 */
async function expectFreshAfter(
  reader: Caller,
  writer: Caller,
  check: string,
  change: string,
): Promise<{ before: unknown; after: unknown }> {
  const before = await read(reader, check);
  expect((await read(reader, check)).cached).toBe(true);
  await write(writer, change);
  const after = await read(reader, check);
  expect(after.cached).toBeUndefined();
  expect(after.rows).not.toEqual(before.rows);
  return { before: before.rows, after: after.rows };
}

beforeAll(async () => {
  await sql(`DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cc_alice') THEN CREATE ROLE cc_alice LOGIN; END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cc_bob') THEN CREATE ROLE cc_bob LOGIN; END IF;
  END $$`);
  await sql(`ALTER ROLE cc_alice LOGIN PASSWORD 'alice-pw'`);
  await sql(`ALTER ROLE cc_bob LOGIN PASSWORD 'bob-pw'`);
  await sql(`DROP VIEW IF EXISTS cc_items_view;
    DROP TABLE IF EXISTS cc_items, cc_audit, cc_child, cc_parent;
    CREATE TABLE cc_items (id int PRIMARY KEY);
    CREATE TABLE cc_audit (item int);
    CREATE TABLE cc_parent (id int PRIMARY KEY);
    CREATE TABLE cc_child (parent int REFERENCES cc_parent ON DELETE CASCADE);
    CREATE VIEW cc_items_view AS SELECT id FROM cc_items;
    CREATE OR REPLACE FUNCTION cc_audit_item() RETURNS trigger LANGUAGE plpgsql AS
      $$BEGIN INSERT INTO cc_audit VALUES (NEW.id); RETURN NEW; END$$;
    CREATE TRIGGER cc_items_audit AFTER INSERT ON cc_items FOR EACH ROW EXECUTE FUNCTION cc_audit_item();
    GRANT ALL ON cc_items, cc_audit, cc_parent, cc_child, cc_items_view TO cc_alice, cc_bob;`);
});

beforeEach(async () => {
  // Behind the service's back, so each test starts with its own app and an empty cache.
  await sql(`TRUNCATE cc_items, cc_audit, cc_parent, cc_child;
    INSERT INTO cc_parent VALUES (1), (2); INSERT INTO cc_child VALUES (1), (1), (2);
    INSERT INTO cc_items VALUES (1); TRUNCATE cc_audit`);
  testApp = createTestApp({ queryCacheTtlMs: 60_000 });
});
afterEach(() => testApp.close());

describe.each([
  [ALICE.name, ALICE, BOB],
  [BOB.name, BOB, ALICE],
])('read by %s, written by the other user on the other spelling', (_name, reader, writer) => {
  it('a plain write to the table read', async () => {
    await expectFreshAfter(
      reader,
      writer,
      'SELECT id FROM cc_items ORDER BY id',
      'INSERT INTO cc_items VALUES (2)',
    );
  });

  it('a write that a trigger carries to another table', async () => {
    const { after } = await expectFreshAfter(
      reader,
      writer,
      'SELECT count(*)::int AS n FROM cc_audit',
      'INSERT INTO cc_items VALUES (3)',
    );
    expect(after).toEqual([{ n: 1 }]);
  });

  it('a DELETE that a foreign key cascades to another table', async () => {
    const { after } = await expectFreshAfter(
      reader,
      writer,
      'SELECT count(*)::int AS n FROM cc_child',
      'DELETE FROM cc_parent WHERE id = 1',
    );
    expect(after).toEqual([{ n: 1 }]);
  });

  it('TRUNCATE ... CASCADE', async () => {
    const { after } = await expectFreshAfter(
      reader,
      writer,
      'SELECT count(*)::int AS n FROM cc_child',
      'TRUNCATE cc_parent CASCADE',
    );
    expect(after).toEqual([{ n: 0 }]);
  });

  it('a write to the table under a view that was read', async () => {
    await expectFreshAfter(
      reader,
      writer,
      'SELECT count(*)::int AS n FROM cc_items_view',
      'INSERT INTO cc_items VALUES (4)',
    );
  });

  it('a write through a view to the table that was read', async () => {
    await expectFreshAfter(
      reader,
      writer,
      'SELECT count(*)::int AS n FROM cc_items',
      'INSERT INTO cc_items_view VALUES (5)',
    );
  });

  it('a write in a transaction that the caller manages', async () => {
    await expectFreshAfter(
      reader,
      writer,
      'SELECT id FROM cc_items ORDER BY id',
      'BEGIN; INSERT INTO cc_items VALUES (6); COMMIT',
    );
  });
});

it('shares one database entry across host spellings and sslModes, but never across users', async () => {
  const query = 'SELECT id FROM cc_items ORDER BY id';
  await read(ALICE, query);
  // Same user and database, other spelling and sslMode: the same entry.
  expect((await read({ ...ALICE, host: '127.0.0.1', sslMode: 'prefer' }, query)).cached).toBe(true);
  // Same spelling, other user: never alice's entry.
  expect((await read({ ...BOB, host: ALICE.host, sslMode: ALICE.sslMode }, query)).cached).toBe(
    undefined,
  );
  // Alice with a wrong password: no entry, and the database refuses her.
  const guess = await post({ ...ALICE, password: 'guess' }, { sql: query, cache: true });
  expect(guess.body.cached).toBeUndefined();
  expect(guess.body.error.code).toBe('28P01');
});

it('a read in the same request after a write sees the write, and is not cached', async () => {
  await read(ALICE, 'SELECT count(*)::int AS n FROM cc_items');
  const response = await post(ALICE, {
    sql: 'INSERT INTO cc_items VALUES (7); SELECT count(*)::int AS n FROM cc_items',
    cache: true,
  });
  expect(response.status).toBe(200);
  expect(response.body.results[1]).toMatchObject({ rows: [{ n: 2 }] });
  expect(response.body.results[1].cached).toBeUndefined();
});

it('a rolled-back write leaves no uncommitted rows in the cache', async () => {
  const response = await post(ALICE, {
    sql: 'INSERT INTO cc_items VALUES (8); SELECT count(*)::int AS n FROM cc_items; SELECT 1/0',
    cache: true,
  });
  expect(response.status).not.toBe(200);
  const after = await read(ALICE, 'SELECT count(*)::int AS n FROM cc_items');
  expect(after).toMatchObject({ rows: [{ n: 1 }] });
  expect(after.cached).toBeUndefined();
});

it('a SET search_path in the request turns the cache off for it', async () => {
  await sql('CREATE SCHEMA IF NOT EXISTS cc_other; GRANT USAGE ON SCHEMA cc_other TO cc_alice');
  await sql(`DROP TABLE IF EXISTS cc_other.cc_items;
    CREATE TABLE cc_other.cc_items AS SELECT 42 AS id; GRANT SELECT ON cc_other.cc_items TO cc_alice`);
  await read(ALICE, 'SELECT id FROM cc_items');
  const shifted = await post(ALICE, {
    sql: 'SET search_path TO cc_other; SELECT id FROM cc_items',
    cache: true,
  });
  expect(shifted.body.results[1]).toMatchObject({ rows: [{ id: 42 }] });
  expect((await read(ALICE, 'SELECT id FROM cc_items')).rows).toEqual([{ id: 1 }]);
});

describe('ALTER ROLE through sqlgate', () => {
  afterEach(() => sql(`ALTER ROLE cc_alice LOGIN PASSWORD 'alice-pw'`));

  it("run on another database of the server, drops the role's cached rows, so an old password is not served from the cache", async () => {
    const query = 'SELECT id FROM cc_items ORDER BY id';
    await read(ALICE, query);
    expect((await read(ALICE, query)).cached).toBe(true);
    await write(
      { ...BOB, user: database.user, password: database.password ?? '', database: OTHER_DATABASE },
      `ALTER ROLE cc_alice PASSWORD 'alice-new'`,
    );
    const old = await post(ALICE, { sql: query, cache: true });
    expect(old.body.cached).toBeUndefined();
  });
});
