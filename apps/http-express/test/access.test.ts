/**
 * Server-side access (docs/decisions.md 12) against the real PostgreSQL: named connections, API
 * keys and JWTs, roles with row-level security, statements that could leave the role, the
 * credentials' rules and limits, and what never leaks.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import pino from 'pino';
import { neon, neonConfig } from '@neondatabase/serverless';
import { eventually, startLocalRedis } from '@sqlgate/testing';
import { loadConfig } from '../src/config';
import { startServer, type RunningServer } from '../src/server';
import { captureLogs, database, sql, target } from './support';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const LOGIN = 'sg_access_login';
const WEB = 'sg_access_web';
const ADMIN = 'sg_access_admin';
const NOTES = 'sg_access_notes';
const SECRET_TABLE = 'sg_access_secret';
const LOG = 'sg_access_log';
const LOGIN_PASSWORD = 'login-pw-Uu7rTq';
const JWT_SECRET = 'jwt-secret-of-at-least-32-bytes-xxxxxxxx';
const READ_KEY = 'read-key-0123456789abcdef';
const WRITE_KEY = 'write-key-0123456789abcdef';
const LIST_KEY = 'list-key-0123456789abcdef';
const RATE_KEY = 'rate-key-0123456789abcdef';
const SLOW_KEY = 'slow-key-0123456789abcdef';
const FAST_KEY = 'fast-key-0123456789abcdef';
const CAPPED_KEY = 'capped-key-0123456789abcdef';
const LISTED_SQL = `SELECT count(*)::int AS n FROM ${NOTES}`;

function loginUrl(name = LOGIN): string {
  return (
    `postgresql://${name}:${LOGIN_PASSWORD}@${database.host}:${database.port}/` +
    encodeURIComponent(database.database)
  );
}

/** A CONFIG_FILE as an operator writes it; the login's password comes from the environment. */
function configFile(): string {
  const directory = mkdtempSync(join(tmpdir(), 'sqlgate-access-'));
  const path = join(directory, 'sqlgate.json');
  const rules = { connections: ['app'], role: WEB };
  writeFileSync(
    path,
    JSON.stringify({
      connections: {
        app: { url: { env: 'SG_ACCESS_APP_URL' } },
        other: { url: { env: 'SG_ACCESS_APP_URL' } },
      },
      keys: [
        { id: 'reader', secret: READ_KEY, ...rules, allow: 'read' },
        { id: 'writer', secret: WRITE_KEY, ...rules, allow: 'all' },
        {
          id: 'lister',
          secret: LIST_KEY,
          ...rules,
          allow: { queries: [{ id: 'count', sql: LISTED_SQL }] },
        },
        { id: 'rated', secret: RATE_KEY, ...rules, allow: 'read', rate: { rate: '10/h' } },
        { id: 'slow', secret: SLOW_KEY, ...rules, allow: 'read', concurrency: 1 },
        { id: 'fast', secret: FAST_KEY, ...rules, allow: 'read', rate: '10/s' },
        { id: 'capped', secret: CAPPED_KEY, ...rules, allow: 'read', maxRows: 5 },
      ],
      jwt: { secret: JWT_SECRET, roleClaim: 'role', connections: ['app'], allow: 'all' },
    }),
  );
  return path;
}

async function token(
  claims: Record<string, unknown>,
  { secret = JWT_SECRET, expiresIn = '5m' }: { secret?: string; expiresIn?: string } = {},
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}

let server: RunningServer;
let logs: ReturnType<typeof captureLogs>;
let accessConfig: ReturnType<typeof loadConfig>['access'];

async function startInstance(extra: Record<string, unknown> = {}): Promise<RunningServer> {
  return startServer({
    port: 0,
    hostname: '127.0.0.1',
    access: accessConfig,
    logger: pino({ level: 'silent' }),
    ...extra,
  });
}

beforeAll(async () => {
  await sql(`
    DROP TABLE IF EXISTS ${NOTES}, ${SECRET_TABLE}, ${LOG};
    DROP ROLE IF EXISTS ${LOGIN};
    DROP ROLE IF EXISTS ${WEB};
    DROP ROLE IF EXISTS ${ADMIN};
    CREATE ROLE ${LOGIN} LOGIN NOINHERIT PASSWORD '${LOGIN_PASSWORD}';
    CREATE ROLE ${WEB} NOLOGIN;
    CREATE ROLE ${ADMIN} NOLOGIN;
    GRANT ${WEB} TO ${LOGIN};
    CREATE TABLE ${NOTES} (id serial PRIMARY KEY, owner text NOT NULL, body text);
    ALTER TABLE ${NOTES} ENABLE ROW LEVEL SECURITY;
    CREATE POLICY own ON ${NOTES}
      USING (owner = current_setting('request.jwt.claims', true)::json->>'sub')
      WITH CHECK (owner = current_setting('request.jwt.claims', true)::json->>'sub');
    GRANT SELECT, INSERT ON ${NOTES} TO ${WEB};
    GRANT USAGE ON SEQUENCE ${NOTES}_id_seq TO ${WEB};
    CREATE TABLE ${SECRET_TABLE} (v text);
    INSERT INTO ${SECRET_TABLE} VALUES ('the login alone reads this');
    GRANT SELECT ON ${SECRET_TABLE} TO ${LOGIN};
    CREATE TABLE ${LOG} (body text, by_user text DEFAULT current_user);
    GRANT INSERT ON ${LOG} TO ${WEB};
    INSERT INTO ${NOTES} (owner, body) VALUES ('alice', 'a1'), ('alice', 'a2'), ('bob', 'b1');
  `);
  accessConfig = loadConfig({
    CONFIG_FILE: configFile(),
    SG_ACCESS_APP_URL: loginUrl(),
  }).access;
  logs = captureLogs('info');
  server = await startServer({
    port: 0,
    hostname: '127.0.0.1',
    access: accessConfig,
    logger: logs.logger,
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

async function query(
  body: Record<string, unknown>,
  bearer?: string,
  base = server.url,
): Promise<{ status: number; body: Json; headers: Headers }> {
  const response = await fetch(`${base}/api/query`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as Json,
    headers: response.headers,
  };
}

/** The writer key's pg_sleep, under the caller's own request id. */
function writerSleeping(requestId: string, seconds: number): Promise<Response> {
  return fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${WRITE_KEY}`,
      'x-request-id': requestId,
    },
    body: JSON.stringify({ connection: 'app', sql: `SELECT pg_sleep(${seconds})` }),
  });
}

const noteCount = async (): Promise<number> =>
  Number((await sql(`SELECT count(*) AS n FROM ${NOTES}`))[0]!['n']);

describe('who may come in', () => {
  it('answers 401 with WWW-Authenticate to a named connection without credentials', async () => {
    const answer = await query({ connection: 'app', sql: 'SELECT 1' });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 401 to an unknown key, and never repeats it', async () => {
    const answer = await query({ connection: 'app', sql: 'SELECT 1' }, 'not-a-key-0123456789');
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.body)).not.toContain('not-a-key');
  });

  it('answers 401 to an expired, forged or unsigned JWT', async () => {
    const expired = await token({ sub: 'alice', role: WEB }, { expiresIn: '-1m' });
    const forged = await token({ sub: 'alice', role: WEB }, { secret: 'x'.repeat(40) });
    const header = Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: 'alice', role: WEB })).toString('base64url');
    for (const bad of [expired, forged, `${header}.${payload}.`]) {
      const answer = await query({ connection: 'app', sql: 'SELECT 1' }, bad);
      expect(answer.status).toBe(401);
    }
  });

  it('answers 403 to a connection the credentials do not name, or one that does not exist', async () => {
    for (const connection of ['other', 'nowhere']) {
      const answer = await query({ connection, sql: 'SELECT 1' }, READ_KEY);
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it('answers 400 to a request that names a connection and a target of its own', async () => {
    const answer = await query({ ...target(), connection: 'app', sql: 'SELECT 1' }, READ_KEY);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/not both/);
  });

  it('answers 403 to a JWT whose role the login cannot take, before any statement', async () => {
    const answer = await query(
      { connection: 'app', sql: `SELECT * FROM ${SECRET_TABLE}` },
      await token({ sub: 'alice', role: ADMIN }),
    );
    expect(answer.status).toBe(403);
    expect(JSON.stringify(answer.body)).not.toContain('the login alone');
  });
});

describe('roles and row-level security', () => {
  it("shows a JWT's subject only its own rows, also through the result cache", async () => {
    const alice = await token({ sub: 'alice', role: WEB });
    const bob = await token({ sub: 'bob', role: WEB });
    const read = { connection: 'app', sql: `SELECT body FROM ${NOTES} ORDER BY id`, cache: true };
    const first = await query(read, alice);
    expect(first.status).toBe(200);
    expect(first.body.rows).toEqual([{ body: 'a1' }, { body: 'a2' }]);
    const again = await query(read, alice);
    expect(again.body.cacheStatus).toBe('hit');
    const other = await query(read, bob);
    expect(other.body.rows).toEqual([{ body: 'b1' }]);
    expect(other.body.cacheStatus).not.toBe('hit');
  });

  it('runs statements as the role: the login alone can read what the role cannot', async () => {
    const answer = await query(
      { connection: 'app', sql: `SELECT current_user AS who; SELECT * FROM ${SECRET_TABLE}` },
      WRITE_KEY,
    );
    expect(answer.status).toBe(400);
    expect(answer.body.results[0].rows).toEqual([{ who: WEB }]);
    expect(JSON.stringify(answer.body)).toMatch(/permission denied/);
  });

  it.each([
    `SET ROLE ${LOGIN}`,
    'RESET ROLE',
    `SELECT set_config('role', '${LOGIN}', false)`,
    `SET SESSION AUTHORIZATION ${LOGIN}`,
    `SELECT set_config('request.jwt.claims', '{"sub":"bob"}', true)`,
    `DO $$ BEGIN EXECUTE 'RESET ROLE'; END $$`,
  ])(
    'refuses %s with 403 before it runs, and the next request is still the role',
    async (escape) => {
      const answer = await query(
        { connection: 'app', sql: `${escape}; SELECT * FROM ${SECRET_TABLE}` },
        WRITE_KEY,
      );
      expect(answer.status).toBe(403);
      expect(JSON.stringify(answer.body)).not.toContain('the login alone');
      const next = await query({ connection: 'app', sql: 'SELECT current_user AS who' }, WRITE_KEY);
      expect(next.body.rows).toEqual([{ who: WEB }]);
    },
  );
});

describe("the credentials' rules", () => {
  it('refuses a write of a reads-only key with 403, and nothing runs', async () => {
    const before = await noteCount();
    const answer = await query(
      { connection: 'app', sql: `INSERT INTO ${NOTES} (owner, body) VALUES ('x', 'y')` },
      READ_KEY,
    );
    expect(answer.status).toBe(403);
    expect(await noteCount()).toBe(before);
  });

  it('runs only the queries of an allowlist, by text or by id', async () => {
    const byText = await query({ connection: 'app', sql: LISTED_SQL }, LIST_KEY);
    expect(byText.body).toMatchObject({ rows: [{ n: 0 }] });
    const byId = await query({ connection: 'app', queryId: 'count' }, LIST_KEY);
    expect(byId.status).toBe(200);
    expect(byId.body.rows).toEqual([{ n: 0 }]);
    for (const body of [
      { connection: 'app', sql: `${LISTED_SQL} ` },
      { connection: 'app', sql: 'SELECT 1' },
      { connection: 'app', queryId: 'nothing' },
    ]) {
      expect((await query(body, LIST_KEY)).status).toBe(403);
    }
  });

  it('runs a session as the role, and refuses a way out of it', async () => {
    const opened = await fetch(`${server.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WRITE_KEY}` },
      body: JSON.stringify({ connection: 'app' }),
    });
    expect(opened.status).toBe(201);
    const { sessionId } = (await opened.json()) as Json;
    const inSession = async (text: string) => {
      const response = await fetch(`${server.url}/api/sessions/${sessionId}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql: text }),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    expect((await inSession('SELECT current_user AS who')).body.rows).toEqual([{ who: WEB }]);
    expect((await inSession('RESET ROLE')).status).toBe(403);
    expect((await inSession('SELECT current_user AS who')).body.rows).toEqual([{ who: WEB }]);
    await fetch(`${server.url}/api/sessions/${sessionId}`, { method: 'DELETE' });
  });

  it("runs the Neon driver's queries as the token's role through /sql", async () => {
    neonConfig.fetchEndpoint = `${server.url}/sql`;
    const alice = neon(`postgresql://web@sqlgate.invalid/app`, {
      authToken: await token({ sub: 'alice', role: WEB }),
    });
    const rows = await alice.query(`SELECT body FROM ${NOTES} ORDER BY id`);
    expect(rows).toEqual([{ body: 'a1' }, { body: 'a2' }]);
  });
});

describe('ways around the rules, found by a hostile pass, refused', () => {
  it('refuses built-ins that run SQL text, which could leave the role inside them', async () => {
    for (const text of [
      `select query_to_xml('select set_config(''role'',''${LOGIN}'',true)', true, false, ''); select * from ${SECRET_TABLE}`,
      `create aggregate pg_temp.esc(text, boolean) (sfunc = pg_catalog.set_config, stype = text, initcond = 'role'); select pg_temp.esc('${LOGIN}', true)`,
      `create aggregate pg_temp.agg(text, boolean) (sfunc = E'\\163et_config', stype = text, initcond = 'role'); select pg_temp.agg('${LOGIN}', true)`,
      `create operator pg_temp.### (leftarg = tsquery, rightarg = text, procedure = 'ts_rewrite')`,
      `select set_config('statement_timeout', '0', true); select pg_sleep(0)`,
      // Read with backslash escapes by the server, what the guard took for a string is a call.
      `set standard_conforming_strings = off; select 'x\\'', set_config('role','${LOGIN}',true) -- '\n; select * from ${SECRET_TABLE}`,
      `set names 'SJIS'; select 1`,
      // Another caller's sequence value, left on a shared connection.
      `select lastval()`,
    ]) {
      const answer = await query({ connection: 'app', sql: text }, WRITE_KEY);
      expect(answer.status).toBe(403);
      expect(JSON.stringify(answer.body)).not.toContain('the login alone');
    }
  });

  it('holds a /sql batch to the allowlist, and opens no session for it', async () => {
    const batch = await fetch(`${server.url}/sql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${LIST_KEY}`,
        'Neon-Connection-String': 'postgresql://x@sqlgate.invalid/app',
      },
      body: JSON.stringify({ queries: [{ query: LISTED_SQL }, { query: 'SELECT 1' }] }),
    });
    expect(batch.status).toBe(403);
    const session = await fetch(`${server.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${LIST_KEY}` },
      body: JSON.stringify({ connection: 'app' }),
    });
    expect(session.status).toBe(403);
  });

  it("holds a session to the credentials' maxRows, and its concurrency while it is open", async () => {
    const open = (bearer: string) =>
      fetch(`${server.url}/api/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ connection: 'app' }),
      });
    const capped = (await (await open(CAPPED_KEY)).json()) as Json;
    const inSession = async (body: Record<string, unknown>) => {
      const response = await fetch(`${server.url}/api/sessions/${capped.sessionId}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const rows = await inSession({ sql: 'SELECT generate_series(1, 50) AS n' });
    expect(rows.body.rows).toHaveLength(5);
    expect(rows.body.truncated).toBe(true);
    expect((await inSession({ sql: 'SELECT 1', maxRows: 50 })).status).toBe(403);
    await fetch(`${server.url}/api/sessions/${capped.sessionId}`, { method: 'DELETE' });

    const held = (await (await open(SLOW_KEY)).json()) as Json;
    expect((await query({ connection: 'app', sql: 'SELECT 1' }, SLOW_KEY)).status).toBe(429);
    expect((await open(SLOW_KEY)).status).toBe(429);
    await fetch(`${server.url}/api/sessions/${held.sessionId}`, { method: 'DELETE' });
    expect((await query({ connection: 'app', sql: 'SELECT 1' }, SLOW_KEY)).status).toBe(200);
  });

  it("cancels only the same credentials' requests", async () => {
    const requestId = `access-owner-${Date.now()}`;
    const running = writerSleeping(requestId, 0.5);
    // Until the request is answered: another key's cancel never reaches it.
    const cancels: number[] = [];
    for (let i = 0; i < 5; i++) {
      const cancel = await fetch(`${server.url}/api/requests/${requestId}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${READ_KEY}` },
        body: JSON.stringify({ connection: 'app' }),
      });
      cancels.push(cancel.status);
    }
    expect(cancels.every((status) => status === 404)).toBe(true);
    expect((await running).status).toBe(200);
  });

  it('refuses two Authorization headers, and a JWT whose signature is spelt otherwise', async () => {
    const twice = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}/api/query`,
        {
          method: 'POST',
          headers: [
            ['content-type', 'application/json'],
            ['authorization', `Bearer ${READ_KEY}`],
            ['authorization', `Bearer ${WRITE_KEY}`],
          ].flat(),
        },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ connection: 'app', sql: 'SELECT 1' }));
    });
    expect(twice).toBe(400);
    const good = await token({ sub: 'alice', role: WEB });
    const last = good.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const index = alphabet.indexOf(last);
    // A 32-byte signature leaves 2 spare bits in its last character: the next one decodes alike.
    const respelt = good.slice(0, -1) + alphabet[(index & ~3) + ((index + 1) & 3)];
    expect((await query({ connection: 'app', sql: 'SELECT 1' }, good)).status).toBe(200);
    expect((await query({ connection: 'app', sql: 'SELECT 1' }, respelt)).status).toBe(401);
  });
});

describe('every endpoint that takes a target', () => {
  it('streams NDJSON rows as the role', async () => {
    const response = await fetch(`${server.url}/api/query`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/x-ndjson',
        authorization: `Bearer ${await token({ sub: 'bob', role: WEB })}`,
      },
      body: JSON.stringify({ connection: 'app', sql: `SELECT body FROM ${NOTES} ORDER BY id` }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"b1"');
    expect(text).not.toMatch(/"a[12]"/);
  });

  it('copies as the role', async () => {
    const copy = async (bearer: string, table: string) => {
      const form = new FormData();
      form.append(
        'request',
        JSON.stringify({ connection: 'app', sql: `COPY ${table} FROM STDIN` }),
      );
      form.append('data', new Blob(['copied\n']));
      const response = await fetch(`${server.url}/api/copy`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}` },
        body: form,
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    expect(await copy(WRITE_KEY, `${LOG} (body)`)).toMatchObject({ status: 200 });
    expect(await sql(`SELECT body, by_user FROM ${LOG}`)).toEqual([
      { body: 'copied', by_user: WEB },
    ]);
    // PostgreSQL refuses COPY FROM under row-level security: the role's, not the login's.
    const underPolicy = await copy(WRITE_KEY, `${NOTES} (body)`);
    expect(underPolicy.status).toBe(400);
    expect(underPolicy.body.error.message).toMatch(/row-level security/);
    expect((await copy(READ_KEY, `${LOG} (body)`)).status).toBe(403);
    expect(await sql(`SELECT count(*)::int AS n FROM ${LOG}`)).toEqual([{ n: 1 }]);
  });

  it('checks a named connection, with credentials only', async () => {
    const check = async (bearer?: string) => {
      const response = await fetch(`${server.url}/api/test-connection`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
        body: JSON.stringify({ connection: 'app' }),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    expect(await check(READ_KEY)).toMatchObject({ status: 200, body: { user: LOGIN } });
    expect((await check()).status).toBe(401);
  });

  it("cancels a key's request by its id with the same credentials", async () => {
    const requestId = `access-cancel-${Date.now()}`;
    const running = writerSleeping(requestId, 30);
    const cancel = (bearer?: string) =>
      fetch(`${server.url}/api/requests/${requestId}/cancel`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
        body: JSON.stringify({ connection: 'app' }),
      });
    expect((await cancel()).status).toBe(401);
    let cancelled = await cancel(WRITE_KEY);
    for (let i = 0; i < 50 && cancelled.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      cancelled = await cancel(WRITE_KEY);
    }
    expect(cancelled.status).toBe(200);
    expect((await running).status).toBe(409);
  });
});

describe('limits', () => {
  it('answers 429 with Retry-After once the rate is used, and only then', async () => {
    const answers = [];
    for (let i = 0; i < 20; i++) {
      answers.push(await query({ connection: 'app', sql: 'SELECT 1' }, RATE_KEY));
    }
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(10);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(10);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ code: 'RATE_LIMITED' });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('lets 100 requests at 10/s through no faster than the bucket refills', async () => {
    const started = performance.now();
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      statuses.push((await query({ connection: 'app', sql: 'SELECT 1' }, FAST_KEY)).status);
    }
    const seconds = (performance.now() - started) / 1000;
    const admitted = statuses.filter((status) => status === 200).length;
    // The burst of 10, and at most what refilled while the requests were sent.
    expect(admitted).toBeGreaterThanOrEqual(10);
    expect(admitted).toBeLessThanOrEqual(10 + Math.ceil(seconds * 10) + 1);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100 - admitted);
  });

  it('shares one bucket between two instances on one Redis', async () => {
    const redis = await startLocalRedis();
    const shared = {
      queryCacheRedisUrl: redis.url,
      queryCacheSecret: 'a-secret-shared-by-both-instances-0123456789',
    };
    const [first, second] = await Promise.all([startInstance(shared), startInstance(shared)]);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const base = (i % 2 === 0 ? first : second).url;
        statuses.push((await query({ connection: 'app', sql: 'SELECT 1' }, RATE_KEY, base)).status);
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await redis.stop();
    }
  });

  it('answers 429 to a request past the concurrency, and lets one in once the slot is free', async () => {
    const marker = `access_slot_${Date.now()}`;
    const slow = query({ connection: 'app', sql: `SELECT pg_sleep(8) AS ${marker}` }, SLOW_KEY);
    // Once its statement runs it holds the slot until it is answered, however busy the machine.
    await eventually(async () => {
      const running = await sql(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()',
        [`%${marker}%`],
      );
      expect(running).toEqual([{ n: 1 }]);
    });
    const second = await query({ connection: 'app', sql: 'SELECT 1' }, SLOW_KEY);
    expect(second.status).toBe(429);
    expect((await slow).status).toBe(200);
    expect((await query({ connection: 'app', sql: 'SELECT 1' }, SLOW_KEY)).status).toBe(200);
  });
});

describe('nothing leaks', () => {
  it("names the pool by the connection's name, and shows no secret in stats, metrics or logs", async () => {
    await query({ connection: 'app', sql: 'SELECT 1' }, READ_KEY);
    await query({ connection: 'app', sql: 'SELECT 1' }, 'wrong-key-0123456789abc');
    const pools = (await (await fetch(`${server.url}/api/stats/pools`)).json()) as Json;
    expect(pools.stats.map((pool: Json) => pool.poolId)).toContain('app');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/sqlgate_access_refusals_total\{reason="unauthorized"\} [1-9]/);
    // A tenant's literals stay out of the cache statistics.
    await query(
      { connection: 'app', sql: "SELECT 'alice private term' AS t", cache: true },
      await token({ sub: 'alice', role: WEB }),
    );
    const cacheStats = JSON.stringify(await (await fetch(`${server.url}/api/stats/cache`)).json());
    expect(cacheStats).toContain('SELECT $1 AS t');
    expect(cacheStats).not.toContain('alice private term');
    const everything = JSON.stringify(pools) + metrics + JSON.stringify(logs.lines());
    for (const secret of [
      LOGIN_PASSWORD,
      READ_KEY,
      WRITE_KEY,
      JWT_SECRET,
      'wrong-key-0123456789abc',
    ]) {
      expect(everything).not.toContain(secret);
    }
    const refusals = logs.lines().filter((line) => line['msg'] === 'access refused');
    expect(refusals).toContainEqual(expect.objectContaining({ reason: 'unauthorized' }));
  });
});

it('refuses the SPEC form when ALLOW_DIRECT_CONNECTIONS is off', async () => {
  const closed = await startInstance({ allowDirectConnections: false });
  try {
    const answer = await query({ ...target(), sql: 'SELECT 1' }, undefined, closed.url);
    expect(answer.status).toBe(401);
    const named = await query({ connection: 'app', sql: 'SELECT 1' }, READ_KEY, closed.url);
    expect(named.status).toBe(200);
  } finally {
    await closed.close();
  }
});
