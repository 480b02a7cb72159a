/**
 * sqlgate behind a real PgBouncer (docs/decisions.md 10.32, 10.33). In transaction mode PgBouncer
 * hands each transaction to whichever backend is free: state a statement leaves for later
 * transactions stays on a backend other callers get, and sqlgate's cleaning (DISCARD ALL) reaches
 * another one. What needs such state, and a session, is refused with 422 TRANSACTION_POOLING
 * before anything runs; what lasts only until COMMIT, and ordinary reads, writes and DDL, run. In
 * session mode everything works as on a direct connection.
 */
import {
  eventually,
  startLocalPgBouncer,
  type LocalPgBouncer,
  type PgBouncerPoolMode,
} from '@sqlgate/testing';
import { Client } from 'pg';
import request from 'supertest';
import { Contract } from './openapi/contract';
import { createTestApp, database, sql, type TestApp } from './support';

const TABLE = 'pooler_session_state_items';
const LOCK_KEY = 741_852;
const contract = new Contract();

beforeAll(async () => {
  await sql(`DROP TABLE IF EXISTS ${TABLE}`);
  await sql(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, name text NOT NULL)`);
  await sql(`INSERT INTO ${TABLE} VALUES (1, 'one'), (2, 'two')`);
});
afterAll(() => sql(`DROP TABLE IF EXISTS ${TABLE}`));

/** A PgBouncer of the given mode, with two backends unless told, and an app whose pools reach it. */
function behindPgBouncer(poolMode: PgBouncerPoolMode, poolSize = 2) {
  const state: { bouncer: LocalPgBouncer; app: TestApp } = {} as never;
  beforeAll(async () => {
    state.bouncer = await startLocalPgBouncer({ server: database, poolMode, poolSize });
    state.app = createTestApp();
  });
  afterAll(async () => {
    await state.app?.close();
    await state.bouncer?.stop();
  });
  const fields = (extra: Record<string, unknown>) => ({
    host: state.bouncer.host,
    port: state.bouncer.port,
    user: database.user,
    password: database.password,
    database: state.bouncer.database,
    sslMode: 'disable',
    ...extra,
  });
  return {
    bouncer: () => state.bouncer,
    query: (sqlText: string, extra: Record<string, unknown> = {}) =>
      request(state.app.app)
        .post('/api/query')
        .send(fields({ sql: sqlText, ...extra })),
    openSession: () => request(state.app.app).post('/api/sessions').send(fields({})),
    inSession: (id: string, sqlText: string) =>
      request(state.app.app).post(`/api/sessions/${id}/query`).send({ sql: sqlText }),
    closeSession: (id: string) => request(state.app.app).delete(`/api/sessions/${id}`),
  };
}

/** Advisory locks held on the server now, by any backend (read directly, not through PgBouncer). */
async function advisoryLocksHeld(): Promise<unknown[]> {
  return sql("SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND objid = $1", [LOCK_KEY]);
}

describe('behind PgBouncer in transaction mode', () => {
  const through = behindPgBouncer('transaction');

  it('refuses a session advisory lock before running it: no lock stays held on an idle backend', async () => {
    const answer = await through.query(`SELECT pg_advisory_lock(${LOCK_KEY})`);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: 'TRANSACTION_POOLING', statementIndex: 0 });
    expect(answer.body.error).toMatch(/pg_advisory_lock\(\).*pg_advisory_xact_lock\(\)/s);
    contract.expectDocumented(answer, '/api/query', 'post');
    expect(await advisoryLocksHeld()).toEqual([]);
    // The same lock for the transaction: released at its end.
    const scoped = await through.query(
      `BEGIN; SELECT pg_advisory_xact_lock(${LOCK_KEY}); SELECT name FROM ${TABLE} WHERE id = 1; COMMIT`,
    );
    expect(scoped.status).toBe(200);
    expect(scoped.body.results[2].rows).toEqual([{ name: 'one' }]);
    expect(await advisoryLocksHeld()).toEqual([]);
  });

  it('refuses to open a session', async () => {
    const answer = await through.openSession();
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: 'TRANSACTION_POOLING' });
    expect(answer.body.error).toMatch(/No session was opened/);
    contract.expectDocumented(answer, '/api/sessions', 'post');
  });

  it.each([
    ['SET', 'SET search_path = public'],
    // Custom variables named local.x, constraints.x and transaction.x, set for the session.
    ['SET', "SET local.x = 'a'"],
    ['SET', "SET constraints.x = 'b'"],
    ['SET', "SET transaction.x = 'c'"],
    // pg_settings' UPDATE rule calls set_config(name, setting, false).
    [
      'UPDATE pg_settings',
      "UPDATE pg_settings SET setting = 'pg_catalog' WHERE name = 'search_path'",
    ],
    [
      'UPDATE pg_settings',
      `UPDATE pg_catalog."pg_settings" SET setting = 'Pacific/Chatham' WHERE name = 'TimeZone'`,
    ],
    ['a temporary object (CREATE TEMPORARY)', 'CREATE TEMP TABLE pooler_scratch (a int)'],
    ['LISTEN', 'LISTEN pooler_channel'],
    ['PREPARE', 'PREPARE pooler_statement AS SELECT 1'],
    ['set_config()', "SELECT set_config('application_name', 'x', false)"],
    ['DECLARE ... WITH HOLD', `DECLARE pooler_cursor CURSOR WITH HOLD FOR SELECT 1`],
  ])('refuses %s, naming the statement, in a script too', async (what, statement) => {
    const alone = await through.query(statement);
    expect(alone.status).toBe(422);
    expect(alone.body).toMatchObject({ code: 'TRANSACTION_POOLING', statementIndex: 0 });
    expect(alone.body.error).toContain(`(${what})`);
    const script = await through.query(`INSERT INTO ${TABLE} VALUES (99, 'x'); ${statement}`);
    expect(script.status).toBe(422);
    expect(script.body).toMatchObject({ code: 'TRANSACTION_POOLING', statementIndex: 1 });
    // Refused before anything ran: the INSERT before it did not either.
    expect(await sql(`SELECT id FROM ${TABLE} WHERE id = 99`)).toEqual([]);
  });

  it('runs what lasts only until COMMIT', async () => {
    const answer = await through.query(
      [
        'BEGIN',
        'SET LOCAL statement_timeout = 5000',
        "SELECT set_config('application_name', 'pooled', true) AS name",
        'CREATE TEMP TABLE pooler_scratch (a int) ON COMMIT DROP',
        'INSERT INTO pooler_scratch VALUES (7)',
        'SELECT a FROM pooler_scratch',
        'COMMIT',
      ].join('; '),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.results[2].rows).toEqual([{ name: 'pooled' }]);
    expect(answer.body.results[5].rows).toEqual([{ a: 7 }]);
  });

  it("keeps a request's timeoutMs to itself: its statement is cancelled, no other caller's is", async () => {
    const ROUNDS = 10;
    const [timed, untimed] = await Promise.all([
      (async () => {
        const statuses: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          statuses.push((await through.query('SELECT pg_sleep(0.5)', { timeoutMs: 100 })).status);
        }
        return statuses;
      })(),
      (async () => {
        const statuses: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          statuses.push((await through.query('SELECT 1 AS one, pg_sleep(0.15)')).status);
        }
        return statuses;
      })(),
    ]);
    // A statement_timeout SET for the one would have stayed on a backend the other then used.
    expect(untimed).toEqual(Array.from({ length: ROUNDS }, () => 200));
    expect(timed).toEqual(Array.from({ length: ROUNDS }, () => 504));
  });

  it('answers ordinary reads, writes and DDL with their rows', async () => {
    const read = await through.query(`SELECT id, name FROM ${TABLE} ORDER BY id`);
    expect(read.status).toBe(200);
    expect(read.body.rows).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ]);
    const ddl = await through.query('CREATE TABLE pooler_ddl (a int); DROP TABLE pooler_ddl');
    expect(ddl.status).toBe(200);
    const write = await through.query(`INSERT INTO ${TABLE} VALUES (3, 'three') RETURNING name`);
    expect(write.status).toBe(200);
    expect(write.body.rows).toEqual([{ name: 'three' }]);
    await sql(`DELETE FROM ${TABLE} WHERE id = 3`);
  });
});

describe('behind PgBouncer in session mode', () => {
  const through = behindPgBouncer('session');

  it('keeps a session’s SET and temporary table from one request to the next', async () => {
    const opened = await through.openSession();
    expect(opened.status).toBe(201);
    const id = opened.body.sessionId as string;
    try {
      for (const statement of [
        'SET application_name = pooler_session',
        'CREATE TEMP TABLE pooler_scratch (a int)',
        'INSERT INTO pooler_scratch VALUES (1)',
      ]) {
        expect((await through.inSession(id, statement)).status).toBe(200);
      }
      for (let request = 0; request < 5; request++) {
        const kept = await through.inSession(
          id,
          "SELECT current_setting('application_name') AS name, (SELECT count(*)::int FROM pooler_scratch) AS rows",
        );
        expect(kept.body.rows).toEqual([{ name: 'pooler_session', rows: 1 }]);
      }
    } finally {
      await through.closeSession(id);
    }
  });

  it('runs a SET and a session advisory lock', async () => {
    expect((await through.query('SET search_path = public')).status).toBe(200);
    const locked = await through.query(`SELECT pg_advisory_lock(${LOCK_KEY})`);
    expect(locked.status).toBe(200);
    // The cleaning after the request released it, on the same backend. The connection may be
    // cleaned after the answer left: waited for, not assumed done.
    await eventually(async () => (await advisoryLocksHeld()).length === 0);
  });
});

describe('behind PgBouncer in session mode with no server connection to spare', () => {
  const through = behindPgBouncer('session', 1);

  it('refuses what needs to know with a timeout that says why, and runs everything else', async () => {
    // sqlgate's own pooled connection holds the pooler's one server connection from now on (so
    // requests go one at a time): the probe's connection waits for one and cannot finish.
    expect((await through.query('SELECT 1 AS one')).status).toBe(200);
    const set = await through.query('SET search_path = public');
    const read = await through.query(`SELECT name FROM ${TABLE} WHERE id = 1`);
    const timed = await through.query('SELECT 2 AS two', { timeoutMs: 5000 });
    expect(set.status).toBe(504);
    expect(set.body.error.code).toBe('ETIMEDOUT');
    expect(set.body.error.message).toMatch(
      /^Statement 0 \(SET\) .* could not be found out .*probe of the target failed: .*try again$/s,
    );
    contract.expectDocumented(set, '/api/query', 'post');
    expect(read.status).toBe(200);
    expect(read.body.rows).toEqual([{ name: 'one' }]);
    // Its timeout is kept by cancelling, which needs no verdict.
    expect(timed.status).toBe(200);
    expect(timed.body.rows).toEqual([{ two: 2 }]);
    const session = await through.openSession();
    expect(session.status).toBe(504);
    expect(session.body.error.message).toMatch(/^A session keeps .* could not be found out /s);
  });
});

describe('behind PgBouncer in session mode whose other server connection another client holds', () => {
  const through = behindPgBouncer('session', 2);

  it('refuses what needs session state as behind a transaction pooler: the pooler was not shown to keep it', async () => {
    const { host, port, database: name } = through.bouncer();
    // The probe's first connection gets the other server connection, its second none.
    const holder = new Client({ host, port, database: name, user: 'holder', ssl: false });
    await holder.connect();
    try {
      await holder.query('SELECT 1');
      const set = await through.query('SET search_path = public');
      expect(set.status).toBe(422);
      expect(set.body).toMatchObject({ code: 'TRANSACTION_POOLING', statementIndex: 0 });
      expect(set.body.error).toMatch(/a pooler not shown to keep .* within a minute/s);
      contract.expectDocumented(set, '/api/query', 'post');
      expect((await through.openSession()).status).toBe(422);
      expect((await through.query('SELECT 1 AS one')).body.rows).toEqual([{ one: 1 }]);
    } finally {
      await holder.end();
    }
  });
});
