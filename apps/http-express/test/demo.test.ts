/**
 * `sqlgate --demo` on a machine without PostgreSQL: the built bin as a child process, with a PATH
 * that holds no PostgreSQL program and a temporary directory of its own. Requests without
 * connection fields run on the embedded database, the console opens on it, and after SIGTERM
 * nothing is left: no process, no file, no listening port.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@sqlgate/testing';
import { pathWithoutPostgres } from './demo-support';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';

/** PGlite starts in a few seconds; on a busy machine in many more. */
const START_LIMIT_MS = 120_000;

let demo: SqlgateProcess;
let scratch: string;
/** The embedded database's port, as the line that says sqlgate listens names it. */
let embeddedPort: number;
/** What it wrote while starting (the kept output's tail moves on with every request logged). */
let startOutput: string;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sqlgate-demo-test-'));
  const temp = path.join(scratch, 'tmp');
  mkdirSync(temp);
  const searchPath = pathWithoutPostgres();
  const found = searchPath
    .split(path.delimiter)
    .flatMap((directory) => ['initdb', 'pg_ctl', 'postgres'].map((p) => path.join(directory, p)))
    .filter((program) => existsSync(program));
  if (found.length > 0) throw new Error(`PostgreSQL is still on the PATH: ${found.join(', ')}`);
  demo = await startSqlgateProcess(
    // HOSTNAME and POOL_MAX are the demo's to decide: given, they are named in a warning.
    {
      PATH: searchPath,
      HOME: scratch,
      TMPDIR: temp,
      LOG_LEVEL: 'info',
      HOSTNAME: '0.0.0.0',
      POOL_MAX: '5',
    },
    ['--demo'],
    true,
  );
  startOutput = demo.output();
  const port = /"embeddedDatabase":"postgres@127\.0\.0\.1:(\d+)\/postgres"/.exec(startOutput)?.[1];
  if (port === undefined) throw new Error(`no embedded database named:\n${demo.output()}`);
  embeddedPort = Number(port);
}, START_LIMIT_MS);

afterAll(async () => {
  await demo?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

async function query(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${demo.url}/api/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('sqlgate --demo without PostgreSQL installed', () => {
  it('answers the README curl body with the row', async () => {
    const answer = await query({ sql: 'SELECT 1' });
    expect(answer).toMatchObject({ status: 200, body: { rows: [{ '?column?': 1 }], rowCount: 1 } });
  });

  it('keeps a write for the next request, and loads and streams COPY data', async () => {
    expect(
      (await query({ sql: 'CREATE TABLE notes (id int PRIMARY KEY, body text)' })).status,
    ).toBe(200);
    const written = await query({ sql: "INSERT INTO notes VALUES (1, 'first'), (2, 'second')" });
    expect(written).toMatchObject({ status: 200, body: { rowCount: 2 } });
    const form = new FormData();
    form.append('request', JSON.stringify({ sql: 'COPY notes FROM STDIN (FORMAT csv)' }));
    form.append('data', new Blob(['3,third\n4,"with, comma"\n']));
    const copied = await fetch(`${demo.url}/api/copy`, { method: 'POST', body: form });
    expect({ status: copied.status, body: await copied.json() }).toMatchObject({
      status: 200,
      body: { command: 'COPY', rowCount: 2 },
    });
    const read = await query({ sql: 'SELECT id, body FROM notes ORDER BY id' });
    expect(read.body.rows).toEqual([
      { id: 1, body: 'first' },
      { id: 2, body: 'second' },
      { id: 3, body: 'third' },
      { id: 4, body: 'with, comma' },
    ]);
    const csv = await fetch(`${demo.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/csv' },
      body: JSON.stringify({ sql: 'COPY (SELECT id FROM notes ORDER BY id) TO STDOUT' }),
    });
    expect(await csv.text()).toBe('1\n2\n3\n4\n');
  });

  it('answers a failing statement with the usual JSON error and its SQLSTATE, and goes on', async () => {
    const failed = await query({ sql: 'SELECT 1/0' });
    expect(failed).toMatchObject({
      status: 400,
      body: { error: { code: '22012', message: 'division by zero' } },
    });
    const copyFailed = new FormData();
    copyFailed.append('request', JSON.stringify({ sql: 'COPY missing FROM STDIN' }));
    copyFailed.append('data', new Blob(['1\n']));
    const copied = await fetch(`${demo.url}/api/copy`, { method: 'POST', body: copyFailed });
    expect(((await copied.json()) as { error: { code: string } }).error.code).toBe('42P01');
    expect((await query({ sql: 'SELECT 2 AS two' })).body.rows).toEqual([{ two: 2 }]);
  });

  it('runs concurrent requests one after another on its one connection, each with its own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => query({ sql: `SELECT ${index} AS n` })),
    );
    expect(answers.map((answer) => answer.body.rows)).toEqual(
      Array.from({ length: 12 }, (_, index) => [{ n: index }]),
    );
  });

  it('names the settings it decides itself with the value given and the value it uses', () => {
    const warning = startOutput
      .split('\n')
      .find((line) => line.includes('the demo decides these settings itself'));
    expect(JSON.parse(warning?.replace(/^\| /, '') ?? '{}')).toMatchObject({
      level: 40,
      ignored: {
        HOSTNAME: { set: '0.0.0.0', used: '127.0.0.1' },
        POOL_MAX: { set: '5', used: '1' },
      },
    });
    expect(new URL(demo.url).hostname).toBe('127.0.0.1');
  });

  it('answers 503 with Retry-After while a statement past its timeoutMs still runs, then serves again', async () => {
    const late = await query({ sql: 'SELECT pg_sleep(20)', timeoutMs: 300 });
    expect(late).toMatchObject({ status: 504, body: { error: { code: 'ETIMEDOUT' } } });
    const response = await fetch(`${demo.url}/api/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'SELECT 1' }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await response.json()).toMatchObject({
      error: { code: '53300', message: expect.stringContaining('still running a statement') },
    });
    await eventually(async () => (await query({ sql: 'SELECT 4 AS four' })).status === 200, {
      withinMs: 120_000,
      everyMs: 1_000,
    });
  }, 180_000);

  it('runs a request that names the embedded database, and refuses any other target', async () => {
    const named = {
      host: '127.0.0.1',
      port: embeddedPort,
      user: 'postgres',
      database: 'postgres',
    };
    expect((await query({ ...named, sql: 'SELECT 3 AS three' })).body.rows).toEqual([{ three: 3 }]);
    const elsewhere = await query({ ...named, port: 5432, sql: 'SELECT 1' });
    expect(elsewhere.status).toBe(403);
  });

  it('serves the console with its form opening on the embedded database, no password in it', async () => {
    const page = await fetch(`${demo.url}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="console/console-');
    const content = /<meta name="sqlgate-connection" content="([^"]*)"/.exec(html)?.[1] ?? '';
    expect(JSON.parse(content.replace(/&#34;/g, '"'))).toEqual({
      host: '127.0.0.1',
      port: embeddedPort,
      user: 'postgres',
      database: 'postgres',
      sslMode: 'disable',
    });
    const check = await fetch(`${demo.url}/api/test-connection`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(await check.json()).toMatchObject({ success: true, database: 'postgres' });
  });

  it('after SIGTERM exits 0, leaving no file and no listening database', async () => {
    const port = embeddedPort;
    process.kill(demo.pid, 'SIGTERM');
    await demo.settle(30_000);
    expect(demo.exit()).toBe('exited with code 0');
    expect(readdirSync(path.join(scratch, 'tmp'))).toEqual([]);
    expect(readdirSync(scratch).sort()).toEqual(['tmp']);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  }, 40_000);
});
