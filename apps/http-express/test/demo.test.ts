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
import { pathWithoutPostgres } from './demo-support';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';

/** PGlite starts in a few seconds; on a busy machine in many more. */
const START_LIMIT_MS = 120_000;

let demo: SqlgateProcess;
let scratch: string;
/** The embedded database's port, as the line that says sqlgate listens names it. */
let embeddedPort: number;

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
    { PATH: searchPath, HOME: scratch, TMPDIR: temp, LOG_LEVEL: 'info' },
    ['--demo'],
    true,
  );
  const port = /"embeddedDatabase":"postgres@127\.0\.0\.1:(\d+)\/postgres"/.exec(
    demo.output(),
  )?.[1];
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
