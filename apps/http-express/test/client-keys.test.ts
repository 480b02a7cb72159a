/**
 * @sqlgate/client without a database password (docs/access.md): `sqlgate({ url, connection,
 * authToken })` and `new Pool({ url, connection, authToken })` against sqlgate started with a
 * CONFIG_FILE and the real PostgreSQL. Every path (template, query, transaction, begin(), stream,
 * Pool, Cursor, drizzle-orm/neon-http) runs as the key's or the token's role; refusals surface
 * with their codes; an abort stops the statement.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import pino from 'pino';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/neon-http';
import type { NeonQueryFunction } from '@neondatabase/serverless';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { eventually } from '@sqlgate/testing';
import { Cursor, DATE_TIME_AS_TEXT, Pool, sqlgate, SqlgateError, type Sql } from '@sqlgate/client';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { database, sql as direct } from './support';

const LOGIN = 'sg_ck_login';
const WEB = 'sg_ck_web';
const NOTES = 'sg_ck_notes';
const LOGIN_PASSWORD = 'ck-login-pw-Zq8vW';
const APP_KEY = 'sg-ck-app-key-0123456789abcdef';
const OTHER_KEY = 'sg-ck-other-key-0123456789abcdef';
const RATED_KEY = 'sg-ck-rated-key-0123456789abcdef';
const JWT_SECRET = 'sg-ck-jwt-secret-of-at-least-32-bytes-long';

let server: RunningServer;

function loginUrl(): string {
  return (
    `postgresql://${LOGIN}:${LOGIN_PASSWORD}@${database.host}:${database.port}/` +
    encodeURIComponent(database.database)
  );
}

/** The server's CONFIG_FILE: the login's URL comes from the environment, as an operator's would. */
function configFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sqlgate-client-keys-')), 'sqlgate.json');
  writeFileSync(
    path,
    JSON.stringify({
      connections: {
        app: { url: { env: 'SG_CK_APP_URL' } },
        other: { url: { env: 'SG_CK_APP_URL' } },
      },
      keys: [
        { id: 'ck-app', secret: APP_KEY, connections: ['app'], role: WEB },
        { id: 'ck-other', secret: OTHER_KEY, connections: ['other'], role: WEB },
        { id: 'ck-rated', secret: RATED_KEY, connections: ['app'], role: WEB, rate: '1/h' },
      ],
      jwt: { secret: JWT_SECRET, connections: ['app'] },
    }),
  );
  return path;
}

function signedToken(subject: string): Promise<string> {
  return new SignJWT({ sub: subject, role: WEB })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(JWT_SECRET));
}

beforeAll(async () => {
  await direct(`
    DROP TABLE IF EXISTS ${NOTES};
    DROP ROLE IF EXISTS ${LOGIN};
    DROP ROLE IF EXISTS ${WEB};
    CREATE ROLE ${LOGIN} LOGIN NOINHERIT NOSUPERUSER PASSWORD '${LOGIN_PASSWORD}';
    CREATE ROLE ${WEB} NOLOGIN;
    GRANT ${WEB} TO ${LOGIN};
    CREATE TABLE ${NOTES} (id int PRIMARY KEY, body text NOT NULL);
    GRANT SELECT, INSERT ON ${NOTES} TO ${WEB};
  `);
  const { access } = loadConfig({ CONFIG_FILE: configFile(), SG_CK_APP_URL: loginUrl() });
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    access,
    logger: pino({ level: 'silent' }),
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const client = () => sqlgate({ url: server.url, connection: 'app', authToken: APP_KEY });

async function noteIds(): Promise<number[]> {
  const rows = await direct(`SELECT id FROM ${NOTES} ORDER BY id`);
  return rows.map((row) => row['id'] as number);
}

/**
 * drizzle-orm/neon-http over `sql`: its types name the Neon driver's query function, which `sql`
 * stands in for.
 */
function drizzleOver(sql: Sql) {
  return drizzle({ client: sql as unknown as NeonQueryFunction<false, false> });
}

/** Whether a statement holding `marker` runs in PostgreSQL now. */
async function running(marker: string): Promise<boolean> {
  const [row] = await direct(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1",
    [`%${marker}%`],
  );
  return (row?.['n'] as number) > 0;
}

/** A fetch that records what each request sent, for what must and must not carry credentials. */
function recordingFetch(): {
  fetch: typeof fetch;
  sent: { path: string; headers: Headers; body: string }[];
} {
  const sent: { path: string; headers: Headers; body: string }[] = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push({
        path: new URL(String(input)).pathname,
        headers: new Headers(init?.headers),
        body: typeof init?.body === 'string' ? init.body : '',
      });
      return globalThis.fetch(input, init);
    },
  };
}

describe('a key with a role: every path runs as the role', () => {
  it('runs tagged templates, query() and transaction() as the role', async () => {
    const sql = client();
    expect(await sql`SELECT current_user AS who, ${'x'}::text AS v`).toEqual([
      { who: WEB, v: 'x' },
    ]);
    expect(await sql.query('SELECT current_user AS who, $1::int AS n', [7])).toEqual([
      { who: WEB, n: 7 },
    ]);
    const [first, second] = await sql.transaction([
      sql`SELECT current_user AS who`,
      sql.query('SELECT session_user AS login'),
    ]);
    expect(first).toEqual([{ who: WEB }]);
    expect(second).toEqual([{ login: LOGIN }]);
  });

  it('commits a begin() as the role; the session is opened with the key, its statements without', async () => {
    const { fetch, sent } = recordingFetch();
    const sql = sqlgate({ url: server.url, connection: 'app', authToken: APP_KEY, fetch });
    const who = await sql.begin(async (tx) => {
      await tx`INSERT INTO ${tx.unsafe(NOTES)} VALUES (1, 'committed')`;
      const [row] = (await tx`SELECT current_user AS who`) as { who: string }[];
      return row?.who;
    });
    expect(who).toBe(WEB);
    expect(await noteIds()).toContain(1);
    const [opening, ...inSession] = sent;
    expect(opening?.path).toBe('/api/sessions');
    expect(JSON.parse(opening?.body ?? '')).toEqual({ connection: 'app' });
    expect(opening?.headers.get('authorization')).toBe(`Bearer ${APP_KEY}`);
    expect(opening?.headers.has('neon-connection-string')).toBe(false);
    expect(inSession.length).toBeGreaterThan(0);
    for (const request of inSession) expect(request.headers.has('authorization')).toBe(false);
  });

  it('rolls back a begin() whose work throws', async () => {
    await expect(
      client().begin(async (tx) => {
        await tx`INSERT INTO ${tx.unsafe(NOTES)} VALUES (2, 'rolled back')`;
        const [row] = (await tx`SELECT current_user AS who`) as { who: string }[];
        throw new Error(`gave up as ${row?.who}`);
      }),
    ).rejects.toThrow(`gave up as ${WEB}`);
    expect(await noteIds()).not.toContain(2);
  });

  it('streams rows as the role', async () => {
    const rows: unknown[] = [];
    for await (const row of client().stream(
      'SELECT current_user AS who, g FROM generate_series(1, 3) g',
    )) {
      rows.push(row);
    }
    expect(rows).toEqual([1, 2, 3].map((g) => ({ who: WEB, g })));
  });

  it('runs Pool.query, a Pool client in BEGIN/COMMIT, and a Cursor as the role', async () => {
    const pool = new Pool({ url: server.url, connection: 'app', authToken: APP_KEY });
    try {
      expect((await pool.query('SELECT current_user AS who')).rows).toEqual([{ who: WEB }]);
      const pinned = await pool.connect();
      try {
        await pinned.query('BEGIN');
        await pinned.query(`INSERT INTO ${NOTES} VALUES (3, 'pool')`);
        expect((await pinned.query('SELECT current_user AS who')).rows).toEqual([{ who: WEB }]);
        await pinned.query('COMMIT');
      } finally {
        pinned.release();
      }
      expect(await noteIds()).toContain(3);
      const reader = await pool.connect();
      try {
        const cursor = reader.query(
          new Cursor('SELECT current_user AS who, g FROM generate_series(1, 3) g'),
        );
        expect(await cursor.read(2)).toEqual([
          { who: WEB, g: 1 },
          { who: WEB, g: 2 },
        ]);
        await cursor.close();
      } finally {
        reader.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('runs drizzle-orm/neon-http over the client', async () => {
    const notes = pgTable(NOTES, { id: integer('id').primaryKey(), body: text('body').notNull() });
    const db = drizzleOver(
      sqlgate({ url: server.url, connection: 'app', authToken: APP_KEY, types: DATE_TIME_AS_TEXT }),
    );
    await direct(`INSERT INTO ${NOTES} VALUES (4, 'drizzle') ON CONFLICT DO NOTHING`);
    const selected = await db
      .select({ body: notes.body, who: drizzleSql<string>`current_user` })
      .from(notes)
      .where(drizzleSql`${notes.id} = 4`);
    expect(selected).toEqual([{ body: 'drizzle', who: WEB }]);
  });
});

describe('a JWT', () => {
  it('is asked of the function for every request, so a refreshed token is used', async () => {
    const subjects = ['alice', 'bob', 'carol', 'dave'];
    let calls = 0;
    const sql = sqlgate({
      url: server.url,
      connection: 'app',
      authToken: () => signedToken(subjects[calls++] ?? 'nobody'),
    });
    const subjectNow = async () =>
      (
        (await sql`SELECT current_user AS who, current_setting('request.jwt.claims', true)::json->>'sub' AS sub`) as {
          who: string;
          sub: string;
        }[]
      )[0];
    expect(await subjectNow()).toEqual({ who: WEB, sub: 'alice' });
    expect(await subjectNow()).toEqual({ who: WEB, sub: 'bob' });
    const inTransaction = await sql.begin(
      async (tx) =>
        (await tx`SELECT current_user AS who, current_setting('request.jwt.claims', true)::json->>'sub' AS sub`) as unknown[],
    );
    expect(inTransaction).toEqual([{ who: WEB, sub: 'carol' }]);
    // The session's statements needed no token: only its opening asked for one.
    expect(calls).toBe(3);
  });

  it('may be given by a plain function, to the Pool too; a trailing newline is dropped', async () => {
    const token = await signedToken('erin');
    const pool = new Pool({ url: server.url, connection: 'app', authToken: () => `${token}\n` });
    try {
      expect((await pool.query('SELECT current_user AS who')).rows).toEqual([{ who: WEB }]);
    } finally {
      await pool.end();
    }
  });
});

describe('refusals', () => {
  it('a wrong key is UNAUTHORIZED on every path', async () => {
    const wrong = sqlgate({
      url: server.url,
      connection: 'app',
      authToken: 'not-a-key-0123456789',
    });
    const unauthorized = { status: 401, code: 'UNAUTHORIZED' };
    await expect(wrong`SELECT 1`).rejects.toMatchObject(unauthorized);
    await expect(wrong`SELECT 1`).rejects.toBeInstanceOf(SqlgateError);
    await expect(wrong.transaction([wrong`SELECT 1`])).rejects.toMatchObject(unauthorized);
    await expect(wrong.begin(async () => 'never')).rejects.toMatchObject(unauthorized);
    await expect(
      (async () => {
        for await (const row of wrong.stream('SELECT 1')) return row;
      })(),
    ).rejects.toMatchObject(unauthorized);
    const pool = new Pool({ url: server.url, connection: 'app', authToken: 'not-a-key-012345' });
    await expect(pool.query('SELECT 1')).rejects.toMatchObject(unauthorized);
    const pinned = await pool.connect();
    await expect(pinned.query('SELECT 1')).rejects.toMatchObject(unauthorized);
    pinned.release();
    await pool.end();
  });

  it('a key that does not name the connection is FORBIDDEN', async () => {
    const foreign = sqlgate({ url: server.url, connection: 'app', authToken: OTHER_KEY });
    const forbidden = { status: 403, code: 'FORBIDDEN' };
    await expect(foreign`SELECT 1`).rejects.toMatchObject(forbidden);
    await expect(foreign.begin(async () => 'never')).rejects.toMatchObject(forbidden);
    const named = sqlgate({ url: server.url, connection: 'other', authToken: OTHER_KEY });
    expect(await named`SELECT current_user AS who`).toEqual([{ who: WEB }]);
  });

  it('a key past its rate is RATE_LIMITED, with the seconds to wait', async () => {
    const rated = sqlgate({ url: server.url, connection: 'app', authToken: RATED_KEY });
    expect(await rated`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    const refusal = await rated`SELECT 1 AS one`.then(
      () => undefined,
      (error: unknown) => error as SqlgateError,
    );
    expect(refusal).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(refusal?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it("a call's own authToken replaces the client's, as with the Neon driver; not in a session", async () => {
    const sql = client();
    await expect(sql.query('SELECT 1', [], { authToken: OTHER_KEY })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const token = await signedToken('frank');
    const [row] = (
      await drizzleOver(sql)
        .$withAuth(token)
        .execute(
          drizzleSql`SELECT current_setting('request.jwt.claims', true)::json->>'sub' AS sub`,
        )
    ).rows;
    expect(row).toEqual({ sub: 'frank' });
    await expect(
      sql.begin(async (tx) => tx.query('SELECT 1', [], { authToken: APP_KEY })),
    ).rejects.toThrow(/session, which takes no authToken/);
  });

  it('options naming no target, or two, are refused with a TypeError', () => {
    const url = 'http://127.0.0.1:1';
    const refusals = [
      {},
      { connectionString: 'postgresql://u:p@h/db', connection: 'app', authToken: APP_KEY },
      { connection: 'app' },
      { connection: '', authToken: APP_KEY },
      { connectionString: 'postgresql://u:p@h/db', authToken: APP_KEY },
    ];
    for (const options of refusals) {
      expect(() => sqlgate({ url, ...options } as never)).toThrow(TypeError);
      expect(() => new Pool({ url, ...options } as never)).toThrow(TypeError);
    }
    expect(() => sqlgate({ url } as never)).toThrow(
      /exactly one of connectionString .* or connection with authToken/,
    );
  });
});

describe('aborting', () => {
  it('stops the running statement in PostgreSQL', async () => {
    const controller = new AbortController();
    const sleeping = client()
      .query("SELECT pg_sleep(30), 'sg_ck_abort_victim'", [], { signal: controller.signal })
      .then(
        () => 'finished',
        (error: unknown) => (error as Error).name,
      );
    await eventually(async () => expect(await running('sg_ck_abort_victim')).toBe(true));
    controller.abort();
    expect(await sleeping).toBe('AbortError');
    await eventually(async () => expect(await running('sg_ck_abort_victim')).toBe(false));
  });

  it('rolls back a begin() and stops its statement', async () => {
    const controller = new AbortController();
    const transaction = client()
      .begin(
        async (tx) => {
          await tx`INSERT INTO ${tx.unsafe(NOTES)} VALUES (5, 'aborted')`;
          await tx`SELECT pg_sleep(30), 'sg_ck_begin_victim'`;
        },
        { signal: controller.signal },
      )
      .then(
        () => 'committed',
        (error: unknown) => (error as Error).name,
      );
    await eventually(async () => expect(await running('sg_ck_begin_victim')).toBe(true));
    controller.abort();
    expect(await transaction).toBe('AbortError');
    await eventually(async () => expect(await running('sg_ck_begin_victim')).toBe(false));
    expect(await noteIds()).not.toContain(5);
  });
});
