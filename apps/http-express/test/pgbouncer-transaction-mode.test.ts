/**
 * sqlgate pointed at a real PgBouncer in transaction mode, end to end through the HTTP API
 * (docs/behind-a-pooler.md; docs/decisions.md 10.30, 10.32, 10.33, 10.5). One behaviour per test:
 * plain reads, writes and transactions; session hygiene (what sets session state is refused, and
 * nothing reaches a later request); named prepared statements under concurrency; sessions; cancel
 * through the pooler; the pooler dropping a connection mid-statement. Each test records what it
 * saw, and the table of behaviour and outcome is printed at the end.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  eventually,
  startLocalPgBouncer,
  type LocalPgBouncer,
  type LocalPgBouncerOptions,
} from '@sqlgate/testing';
import { Client } from 'pg';
import { startServer, type RunningServer } from '../src/server';
import { database, directClient, sql } from './support';

// Cancelled and cut statements are waited for until they end in PostgreSQL.
jest.setTimeout(120_000);

const TABLE = 'pooler_mode_items';
const WRITES = 'pooler_mode_writes';
/** Server connections PgBouncer opens: fewer than the client connections sqlgate's pools hold. */
const POOL_SIZE = 2;
const ADMIN = 'pooler_admin';
const BOUNCER_OPTIONS = {
  server: database,
  poolMode: 'transaction',
  poolSize: POOL_SIZE,
  // The admin console, for KILL and RESUME (test 6).
  settings: { admin_users: ADMIN },
} satisfies LocalPgBouncerOptions;
const installedVersion = /PgBouncer (\d+)\.(\d+)\.(\d+)/.exec(
  execFileSync('pgbouncer', ['--version'], { encoding: 'utf8' }),
);
const VERSION = installedVersion ? installedVersion.slice(1).join('.') : 'unknown';
/** PgBouncer's protocol-level prepared statements (`max_prepared_statements`) came with 1.21. */
const HAS_MAX_PREPARED_STATEMENTS =
  installedVersion !== null &&
  (Number(installedVersion[1]) > 1 ||
    (Number(installedVersion[1]) === 1 && Number(installedVersion[2]) >= 21));

const table: [string, string][] = [];
const record = (behaviour: string, outcome: string): void => {
  table.push([behaviour, outcome]);
};

let bouncer: LocalPgBouncer;
let server: RunningServer;

beforeAll(async () => {
  await sql(`DROP TABLE IF EXISTS ${TABLE}, ${WRITES}`);
  await sql(`CREATE TABLE ${TABLE} (k int PRIMARY KEY, name text NOT NULL)`);
  await sql(`INSERT INTO ${TABLE} SELECT g, 'item ' || g FROM generate_series(1, 8) g`);
  await sql(`CREATE TABLE ${WRITES} (id int, note text)`);
  bouncer = await startLocalPgBouncer(BOUNCER_OPTIONS);
  server = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
});

afterAll(async () => {
  const header: [string, string] = [
    `behaviour (PgBouncer ${VERSION}, transaction mode)`,
    'outcome',
  ];
  const widths = [0, 1].map((column) =>
    Math.max(...[header, ...table].map((row) => row[column]!.length)),
  );
  const line = (row: [string, string]) =>
    row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ');
  console.log(['sqlgate behind PgBouncer', line(header), ...table.map(line)].join('\n'));
  await server?.close();
  await bouncer?.stop();
  await sql(`DROP TABLE IF EXISTS ${TABLE}, ${WRITES}`);
});

/** Connection fields of a body through PgBouncer as `user`: PgBouncer lets any user in. */
function through(user = 'pooled', target: LocalPgBouncer = bouncer): Record<string, unknown> {
  return {
    host: target.host,
    port: target.port,
    user,
    password: `${user}-password`,
    database: target.database,
    sslMode: 'disable',
  };
}

/** A JSON answer, read as each test expects it. */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Answer {
  status: number;
  body: Json;
}

async function post(
  path: string,
  body: Record<string, unknown>,
  init: { headers?: Record<string, string>; signal?: AbortSignal; on?: RunningServer } = {},
): Promise<Answer> {
  const response = await fetch(`${(init.on ?? server).url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const query = (
  sqlText: string,
  extra: Record<string, unknown> = {},
  init: Parameters<typeof post>[2] = {},
): Promise<Answer> => post('/api/query', { ...through(), sql: sqlText, ...extra }, init);

/** Backends (read on the cluster itself, not through PgBouncer) running a statement with `marker`. */
async function activeWith(marker: string): Promise<number> {
  const [row] = await sql(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1`,
    [`%${marker}%`],
  );
  return row?.['n'] as number;
}

const untilRunning = (marker: string) =>
  eventually(async () => (await activeWith(marker)) === 1, { withinMs: 30_000 });
const untilEnded = (marker: string) =>
  eventually(async () => (await activeWith(marker)) === 0, { withinMs: 30_000 });

const writeCount = async (id: number) =>
  (await sql(`SELECT count(*)::int AS n FROM ${WRITES} WHERE id = $1`, [id]))[0]?.['n'] as number;

const statusAndCode = (answer: Answer): string => {
  const code = answer.body['code'] ?? answer.body['error']?.code;
  return code ? `${answer.status} ${String(code)}` : String(answer.status);
};

describe('1. plain reads, writes and transactions', () => {
  it('answer as on a direct connection', async () => {
    const read = await query(`SELECT k, name FROM ${TABLE} WHERE k <= 2 ORDER BY k`);
    expect(read.status).toBe(200);
    expect(read.body['rows']).toEqual([
      { k: 1, name: 'item 1' },
      { k: 2, name: 'item 2' },
    ]);
    record('read', `${read.status}, its rows`);

    const write = await query(`INSERT INTO ${WRITES} VALUES (1, 'plain') RETURNING id`);
    expect(write.status).toBe(200);
    expect(write.body['rows']).toEqual([{ id: 1 }]);
    record('write (INSERT ... RETURNING)', `${write.status}, committed`);

    const caller = await query(
      `BEGIN; INSERT INTO ${WRITES} VALUES (2, 'caller'); ` +
        `UPDATE ${WRITES} SET note = 'caller, updated' WHERE id = 2; ` +
        `SELECT note FROM ${WRITES} WHERE id = 2; COMMIT`,
    );
    expect(caller.status).toBe(200);
    expect(caller.body['results'][3].rows).toEqual([{ note: 'caller, updated' }]);
    expect(await sql(`SELECT note FROM ${WRITES} WHERE id = 2`)).toEqual([
      { note: 'caller, updated' },
    ]);
    record('BEGIN; INSERT; UPDATE; SELECT; COMMIT', `${caller.status}, committed, one backend`);

    // sqlgate's own transaction around a script of writes: all or nothing.
    const failed = await query(
      `INSERT INTO ${WRITES} VALUES (3, 'rolled back'); SELECT 1 / 0 AS never`,
    );
    expect(failed.status).toBe(400);
    expect(failed.body['failedStatementIndex']).toBe(1);
    expect(await sql(`SELECT id FROM ${WRITES} WHERE id = 3`)).toEqual([]);
    record("script in sqlgate's transaction, failing", `${failed.status}, nothing committed`);
  });
});

describe('2. session hygiene', () => {
  const PROBES = 4 * POOL_SIZE;
  /** What every backend of the pool answers when nothing leaked onto it. */
  let defaults: Record<string, unknown>;
  const SHOW_SCRIPT =
    'SHOW search_path; SHOW work_mem; SHOW statement_timeout; ' +
    'SELECT pg_backend_pid() AS pid FROM pg_sleep(0.05)';

  beforeAll(async () => {
    const client = await directClient();
    try {
      const settings = await client.query(
        "SELECT current_setting('search_path') AS search_path, current_setting('work_mem') AS work_mem, current_setting('statement_timeout') AS statement_timeout",
      );
      defaults = settings.rows[0] as Record<string, unknown>;
    } finally {
      await client.end();
    }
  });

  /**
   * PROBES requests at once, each holding its backend a moment so that every backend is probed,
   * each reporting its own settings with SHOW; those that differ from the cluster's defaults.
   */
  async function leaks(): Promise<{ backends: number; leaked: unknown[] }> {
    const answers = await Promise.all(Array.from({ length: PROBES }, () => query(SHOW_SCRIPT)));
    const pids = new Set<unknown>();
    const leaked: unknown[] = [];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const [searchPath, workMem, statementTimeout, backend] = (
        answer.body['results'] as { rows: Json[] }[]
      ).map((result) => result.rows[0] as Json);
      const seen = {
        search_path: searchPath?.['search_path'],
        work_mem: workMem?.['work_mem'],
        statement_timeout: statementTimeout?.['statement_timeout'],
      };
      pids.add(backend?.['pid']);
      if (JSON.stringify(seen) !== JSON.stringify(defaults)) leaked.push(seen);
    }
    return { backends: pids.size, leaked };
  }

  it.each([
    ['SET search_path', 'SET search_path = pooler_leak', 0],
    ['SET work_mem', "SET work_mem = '7MB'", 0],
    ['SET in a script', `SELECT k FROM ${TABLE} WHERE k = 1; SET work_mem = '7MB'`, 1],
    ['set_config(..., false)', "SELECT set_config('work_mem', '7MB', false)", 0],
  ])('%s is refused with 422 before anything runs; no probe sees it', async (what, text, index) => {
    const answer = await query(text);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: 'TRANSACTION_POOLING', statementIndex: index });
    const { backends, leaked } = await leaks();
    expect(backends).toBe(POOL_SIZE);
    expect(leaked).toEqual([]);
    record(
      what,
      `${statusAndCode(answer)}; ${PROBES} SHOW probes on ${backends} backends: no leak`,
    );
  });

  it('SET LOCAL in a transaction runs, and ends with it', async () => {
    const answer = await query("BEGIN; SET LOCAL work_mem = '7MB'; SHOW work_mem; COMMIT");
    expect(answer.status).toBe(200);
    expect(answer.body['results'][2].rows).toEqual([{ work_mem: '7MB' }]);
    const { leaked } = await leaks();
    expect(leaked).toEqual([]);
    record('BEGIN; SET LOCAL work_mem; SHOW; COMMIT', `${answer.status}, 7MB inside; no leak`);
  });

  it('timeoutMs is kept by cancelling, not by a SET statement_timeout left on a backend', async () => {
    const answer = await query('SELECT pg_sleep(5) AS pooler_timeout', { timeoutMs: 200 });
    expect(answer.status).toBe(504);
    expect(answer.body['error']).toMatchObject({ code: '57014' });
    await untilEnded('pooler_timeout');
    const { leaked } = await leaks();
    expect(leaked).toEqual([]);
    record(
      'timeoutMs: 200 on a 5 s statement',
      `${statusAndCode(answer)}; statement_timeout never SET`,
    );
  });

  it("a caller's DISCARD ALL runs (it only takes state away) and later named reads stay right", async () => {
    const text = `SELECT k FROM ${TABLE} WHERE k = 5`;
    for (let round = 0; round < 3; round++) {
      expect((await query(text)).body['rows']).toEqual([{ k: 5 }]);
    }
    const discard = await query('DISCARD ALL');
    expect(discard.status).toBe(200);
    const after = await Promise.all(Array.from({ length: PROBES }, () => query(text)));
    expect(after.map((answer) => [answer.status, answer.body['rows']])).toEqual(
      Array.from({ length: PROBES }, () => [200, [{ k: 5 }]]),
    );
    record("caller's DISCARD ALL", `${discard.status}; named reads after it: 200, right rows`);
  });
});

describe('3. named prepared statements', () => {
  const TEXTS = [1, 2, 3, 4].map(
    (k) => `SELECT k, name FROM ${TABLE}, pg_sleep(0.02) WHERE k = ${k}`,
  );
  const USERS = Array.from({ length: 6 }, (_, index) => `caller_${index}`);
  const ROUNDS = 8;
  /** docs/decisions.md 10.30: `sqlgate_` and base64url SHA-256 of (no parameter types, text). */
  const nameOf = (text: string) =>
    `sqlgate_${createHash('sha256').update(Buffer.alloc(4)).update(text, 'utf8').digest('base64url')}`;

  /** Every caller sends every text in every round, all at once: the answers that are not their own. */
  async function wrongAnswers(target: LocalPgBouncer, on: RunningServer): Promise<string[]> {
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        USERS.flatMap((user) =>
          TEXTS.map(async (text, index) => {
            const k = index + 1;
            const answer = await post(
              '/api/query',
              { ...through(user, target), sql: text },
              { on },
            );
            const expected = [{ k, name: `item ${k}` }];
            if (
              answer.status !== 200 ||
              JSON.stringify(answer.body['rows']) !== JSON.stringify(expected)
            ) {
              wrong.push(`${user} text ${k}: ${answer.status} ${JSON.stringify(answer.body)}`);
            }
          }),
        ),
      );
    }
    return wrong;
  }

  /** sqlgate's names held by the backends, read through PgBouncer several times. */
  async function namesOnBackends(
    target: LocalPgBouncer,
    on: RunningServer,
  ): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const answers = await Promise.all(
      Array.from({ length: 4 * POOL_SIZE }, () =>
        post(
          '/api/query',
          {
            ...through('observer', target),
            sql: "SELECT name, statement FROM pg_prepared_statements, pg_sleep(0.05) WHERE name LIKE 'sqlgate\\_%'",
          },
          { on },
        ),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      for (const row of answer.body['rows'] as { name: string; statement: string }[]) {
        names.set(row.name, row.statement);
      }
    }
    return names;
  }

  it('stay correct under concurrency: different texts interleaved, many client connections', async () => {
    const wrong = await wrongAnswers(bouncer, server);
    expect(wrong).toEqual([]);
    const names = await namesOnBackends(bouncer, server);
    const ours = TEXTS.filter((text) => names.get(nameOf(text)) === text);
    // Naming was not given up: the backends hold the texts under their SHA-256 names.
    expect(ours.length).toBeGreaterThan(0);
    for (const [name, statement] of names) expect(name).toBe(nameOf(statement));
    record(
      `named reads: ${USERS.length} callers x ${TEXTS.length} texts x ${ROUNDS} rounds, ${POOL_SIZE} backends`,
      `${USERS.length * TEXTS.length * ROUNDS} answers, 0 wrong; names = sqlgate_ + SHA-256 of the text (${names.size} seen)`,
    );
  });

  it("PgBouncer's max_prepared_statements changes nothing sqlgate sends", async () => {
    if (!HAS_MAX_PREPARED_STATEMENTS) {
      record(
        'PgBouncer max_prepared_statements',
        `absent from PgBouncer ${VERSION} (added in 1.21); sqlgate's own naming holds without it`,
      );
      return;
    }
    const tracking = await startLocalPgBouncer({
      ...BOUNCER_OPTIONS,
      settings: { ...BOUNCER_OPTIONS.settings, max_prepared_statements: '100' },
    });
    const own = await startServer({ port: 0, hostname: '127.0.0.1', logLevel: 'silent' });
    try {
      expect(await wrongAnswers(tracking, own)).toEqual([]);
      record('max_prepared_statements = 100', 'named reads: 0 wrong answers');
    } finally {
      await own.close();
      await tracking.stop();
    }
  });
});

describe('4. sessions', () => {
  it('are refused with 422: a session keeps a client connection, not a backend', async () => {
    const answer = await post('/api/sessions', through());
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: 'TRANSACTION_POOLING' });
    expect(answer.body['error']).toMatch(/No session was opened/);
    record(
      'POST /api/sessions',
      `${statusAndCode(answer)}: state would be lost between transactions`,
    );
  });
});

describe('5. cancel through the pooler', () => {
  it('by request id: PgBouncer forwards the CancelRequest and the statement ends in PostgreSQL', async () => {
    const marker = 'pooler_cancel_by_id';
    const requestId = `${marker}-${process.pid}`;
    const running = query(
      `SELECT pg_sleep(60) AS ${marker}`,
      {},
      {
        headers: { 'x-request-id': requestId },
      },
    );
    await untilRunning(marker);
    const cancel = await post(`/api/requests/${requestId}/cancel`, through());
    expect(cancel.status).toBe(200);
    expect(cancel.body).toEqual({ cancelled: true });
    const answer = await running;
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ cancelled: true });
    await untilEnded(marker);
    record(
      'POST /api/requests/{id}/cancel on pg_sleep(60)',
      `${cancel.status}; the request ${answer.status}; backend idle`,
    );
  });

  it('by the caller going away: the statement ends in PostgreSQL', async () => {
    const marker = 'pooler_cancel_gone';
    const caller = new AbortController();
    const running = query(`SELECT pg_sleep(60) AS ${marker}`, {}, { signal: caller.signal });
    await untilRunning(marker);
    caller.abort();
    await expect(running).rejects.toThrow();
    await untilEnded(marker);
    // The connection goes back to the pool and serves the next request.
    expect((await query(`SELECT k FROM ${TABLE} WHERE k = 1`)).body['rows']).toEqual([{ k: 1 }]);
    record('caller closes its socket during pg_sleep(60)', 'backend idle; next request 200');
  });
});

describe("6a. PgBouncer's KILL of the database mid-statement (a FATAL report, then RESUME)", () => {
  /** PgBouncer's admin console, as its admin user (auth_type = any asks no password). */
  async function admin(command: string): Promise<void> {
    const console = new Client({
      host: bouncer.host,
      port: bouncer.port,
      database: 'pgbouncer',
      user: ADMIN,
      ssl: false,
    });
    await console.connect();
    try {
      await console.query(command);
    } finally {
      await console.end();
    }
  }

  /**
   * Runs `text` (holding `marker`) and KILLs the database in PgBouncer while it runs: PgBouncer
   * sends its clients FATAL 08P01 "database removed", closes their server connections, and holds
   * new logins until RESUME.
   */
  async function killDuring(
    marker: string,
    text: string,
  ): Promise<{ answer: Answer; afterResume: string }> {
    const running = query(text);
    await untilRunning(marker);
    await admin(`KILL ${bouncer.database}`);
    const answer = await running;
    await admin(`RESUME ${bouncer.database}`);
    return { answer, afterResume: await servedAgain() };
  }

  /**
   * Waits until sqlgate serves through PgBouncer again. PgBouncer 1.18 holds new logins a while
   * after RESUME (any client's, not only sqlgate's): those requests answer 504 ETIMEDOUT after
   * CONNECT_TIMEOUT_MS.
   */
  async function servedAgain(): Promise<string> {
    const statuses: string[] = [];
    await eventually(
      async () => {
        const answer = await query(`SELECT k FROM ${TABLE} WHERE k = 3`);
        if (!statuses.includes(statusAndCode(answer))) statuses.push(statusAndCode(answer));
        expect(answer.status).toBe(200);
        expect(answer.body['rows']).toEqual([{ k: 3 }]);
      },
      { withinMs: 60_000 },
    );
    return statuses.join(', then ');
  }

  it('a lone write: 502 08P01 saying its outcome is unknown', async () => {
    const marker = 'pooler_kill_write';
    const { answer, afterResume } = await killDuring(
      marker,
      `INSERT INTO ${WRITES} SELECT 20, '${marker}' FROM pg_sleep(2)`,
    );
    expect(answer.status).toBe(502);
    expect(answer.body['error']).toMatchObject({ code: '08P01', outcomeUnknown: true });
    await untilEnded(marker);
    const rows = await writeCount(20);
    expect(rows).toBeLessThanOrEqual(1);
    record(
      'KILL db during a lone INSERT',
      `${statusAndCode(answer)}, outcomeUnknown; PostgreSQL then ${rows === 1 ? 'committed it' : 'did not commit it'}`,
    );
    record('requests after RESUME', afterResume);
  });

  it("a caller's transaction: nothing committed, and not said to be unknown", async () => {
    const marker = 'pooler_kill_transaction';
    const { answer, afterResume } = await killDuring(
      marker,
      `BEGIN; INSERT INTO ${WRITES} VALUES (21, '${marker}'); SELECT pg_sleep(2) AS ${marker}; COMMIT`,
    );
    // The pooler's FATAL report ended the connection: a lost connection's 502, whatever its code.
    expect(answer.status).toBe(502);
    expect(JSON.stringify(answer.body)).not.toMatch(/whether it committed is unknown/);
    await untilEnded(marker);
    expect(await writeCount(21)).toBe(0);
    const failed = (answer.body['results'] as Json[] | undefined)?.find(
      (result) => result['error'],
    );
    const cause = failed?.['cause'] as Json | undefined;
    record(
      'KILL db inside BEGIN ... COMMIT',
      `${answer.status}${cause ? ` (${String(cause['severity'])} ${String(cause['code'])} ${String(cause['message'])})` : ''}; rolled back`,
    );
    record('requests after RESUME', afterResume);
  });
});

describe('6b. PgBouncer ending abruptly mid-statement, and coming back', () => {
  /** Brings PgBouncer back at the address sqlgate's pools know. */
  async function restartPgBouncer(): Promise<void> {
    bouncer = await startLocalPgBouncer({ ...BOUNCER_OPTIONS, port: bouncer.port });
  }

  /**
   * Runs `text` (holding `marker`), ends PgBouncer abruptly while it runs (SIGKILL, by the pid it
   * wrote: every socket closes at once, as when the pooler crashes or its host goes away; a SIGINT
   * of PgBouncer 1.18 lets running queries finish), then starts it again.
   */
  async function cutBy(marker: string, text: string): Promise<Answer> {
    const running = query(text);
    await untilRunning(marker);
    const pid = Number(
      (await readFile(path.join(bouncer.directory, 'pgbouncer.pid'), 'utf8')).trim(),
    );
    process.kill(pid, 'SIGKILL');
    await bouncer.stop();
    const answer = await running;
    await restartPgBouncer();
    return answer;
  }

  it('a lone write: 502 saying its outcome is unknown', async () => {
    const marker = 'pooler_drop_write';
    const answer = await cutBy(
      marker,
      `INSERT INTO ${WRITES} SELECT 10, '${marker}' FROM pg_sleep(2)`,
    );
    expect(answer.status).toBe(502);
    expect(answer.body['error']).toMatchObject({ outcomeUnknown: true });
    expect(answer.body['error'].message).toMatch(/whether it committed is unknown/);
    await untilEnded(marker);
    const rows = await writeCount(10);
    expect(rows).toBeLessThanOrEqual(1);
    record(
      'PgBouncer process SIGKILLed during a lone INSERT',
      `${statusAndCode(answer)}, outcomeUnknown; PostgreSQL then ${rows === 1 ? 'committed it' : 'did not commit it'}`,
    );
  });

  it('a read free of side effects: 502 that says it failed, nothing unknown', async () => {
    const marker = 'pooler_drop_read';
    // Slow without a volatile function: a read that calls one may write (below).
    const answer = await cutBy(
      marker,
      `SELECT count(*) AS ${marker} FROM generate_series(1, 20000) a, generate_series(1, 20000) b`,
    );
    // The backend would count on for a while with nobody to answer: stopped directly.
    await sql(
      `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()`,
      [`%AS ${marker}%`],
    );
    expect(answer.status).toBe(502);
    expect(answer.body['error'].outcomeUnknown).toBeUndefined();
    expect(answer.body['error'].message).not.toMatch(/whether it committed is unknown/);
    record(
      'PgBouncer process SIGKILLed during a read',
      `${statusAndCode(answer)}, failed, no outcomeUnknown`,
    );
  });

  it('a read calling a volatile function: 502 whose outcome is unknown, since it may write', async () => {
    const marker = 'pooler_drop_volatile_read';
    const answer = await cutBy(marker, `SELECT k AS ${marker} FROM ${TABLE}, pg_sleep(2)`);
    expect(answer.status).toBe(502);
    expect(answer.body['error']).toMatchObject({ outcomeUnknown: true });
    await untilEnded(marker);
    record(
      'PgBouncer process SIGKILLed during a read calling pg_sleep',
      `${statusAndCode(answer)}, outcomeUnknown`,
    );
  });

  it("a caller's transaction cut before COMMIT: nothing committed, and not said to be unknown", async () => {
    const marker = 'pooler_drop_transaction';
    const answer = await cutBy(
      marker,
      `BEGIN; INSERT INTO ${WRITES} VALUES (11, '${marker}'); SELECT pg_sleep(2) AS ${marker}; COMMIT`,
    );
    expect(answer.status).toBe(502);
    expect(JSON.stringify(answer.body)).not.toMatch(/whether it committed is unknown/);
    await untilEnded(marker);
    expect(await writeCount(11)).toBe(0);
    record(
      'PgBouncer process SIGKILLed inside BEGIN ... COMMIT',
      `${statusAndCode(answer)}; rolled back`,
    );
  });

  it('answers 502 while PgBouncer is gone, and serves again once it is back', async () => {
    await bouncer.stop();
    const gone = await query(`SELECT k FROM ${TABLE} WHERE k = 2`);
    expect(gone.status).toBe(502);
    // The service itself stays up.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    record('request while PgBouncer is stopped', `${statusAndCode(gone)}; sqlgate stays up`);

    await restartPgBouncer();
    const served = await query(`SELECT k FROM ${TABLE} WHERE k = 2`);
    expect(served.status).toBe(200);
    expect(served.body['rows']).toEqual([{ k: 2 }]);
    record('first request once PgBouncer is back', `${served.status}, its rows`);
  });
});
