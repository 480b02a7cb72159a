/**
 * @sqlgate/client's built bundle (packages/client/dist/index.mjs) in the runtimes it claims besides
 * Node and browsers: Bun, Deno and Cloudflare's workerd, each from npm (packages/client's
 * devDependencies) and each a child process. One script, client-runtimes/checks.mjs, runs in all
 * three against the built sqlgate server and the real PostgreSQL: typed values, a batch,
 * interactive transactions that commit and roll back, a stream, an abort that stops the statement
 * in PostgreSQL, and a failure's SQLSTATE. And in Node, Bun and Deno, a process that runs out of
 * work inside begin() ends its session first, rolling the transaction back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startSqlgateProcess, type SqlgateProcess } from './sqlgate-process';
import { database, sql } from './support';
import { startWorkerd } from './workerd-process';

const REPO = path.join(__dirname, '..', '..', '..');
const BUNDLE = path.join(REPO, 'packages', 'client', 'dist', 'index.mjs');
const FIXTURES = path.join(__dirname, 'client-runtimes');
const binary = (name: string): string => path.join(REPO, 'node_modules', '.bin', name);

const connectionString =
  `postgresql://${encodeURIComponent(database.user)}:${encodeURIComponent(database.password ?? '')}` +
  `@${database.host}:${database.port}/${encodeURIComponent(database.database)}`;

/** How each runtime runs a script with one argument (Deno with the permissions the script needs). */
const COMMANDS: Record<string, (script: string, argument: string) => [string, string[]]> = {
  node: (script, argument) => [process.execPath, [script, argument]],
  bun: (script, argument) => [binary('bun'), ['run', script, argument]],
  deno: (script, argument) => [
    binary('deno'),
    ['run', '--allow-net=127.0.0.1', `--allow-read=${FIXTURES},${BUNDLE}`, script, argument],
  ],
};

let sqlgate: SqlgateProcess;
/** Runtimes still running: a test that failed by its timeout leaves none behind. */
const running = new Set<ChildProcess>();

beforeAll(async () => {
  sqlgate = await startSqlgateProcess({});
});
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
});
afterAll(async () => {
  await sqlgate?.stop();
});

/** A fresh, empty table for one runtime's checks. */
async function freshTable(name: string): Promise<string> {
  await sql(`DROP TABLE IF EXISTS ${name}; CREATE TABLE ${name} (n int PRIMARY KEY, note text)`);
  return name;
}

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` of the fixtures in `runtime` to its end; rejects when the runtime cannot start. */
function runScript(runtime: string, script: string, settings: object): Promise<Finished> {
  const [command, args] = COMMANDS[runtime]!(path.join(FIXTURES, script), JSON.stringify(settings));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      // Deno's check for a newer release would write to stderr, which the tests expect empty.
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error) => {
      running.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** What every runtime's checks must report, on table `table`. */
function expectedReport(table: string): Record<string, unknown> {
  const passed = (value: unknown) => ({ ok: true, value });
  return {
    typedValues: passed({
      big: '42',
      atIsDate: true,
      at: '2026-01-02T03:04:05.678Z',
      doc: { a: [1, null] },
      bytesAreUint8Array: true,
      bytes: [0, 255, 16],
      sent: [7, 8, 9],
    }),
    transactions: passed({
      batch: [[{ n: 1 }], [{ n: 2 }]],
      committed: 3,
      thrown: 'changed my mind',
      rows: [
        { n: 1, note: 'batch' },
        { n: 2, note: 'batch' },
        { n: 3, note: 'begin' },
      ],
    }),
    streamed: passed([[1], [2], [3]]),
    aborted: passed({ name: 'AbortError', stoppedInPostgres: true }),
    failures: passed({
      divisionByZero: { name: 'SqlgateError', status: 400, code: '22012' },
      duplicate: {
        name: 'SqlgateError',
        status: 400,
        code: '23505',
        constraint: `${table}_pkey`,
      },
    }),
  };
}

describe.each(['bun', 'deno'])('in %s', (runtime) => {
  it('runs the checks through the built bundle', async () => {
    const table = await freshTable(`client_runtime_${runtime}`);
    const settings = {
      bundle: pathToFileURL(BUNDLE).href,
      url: sqlgate.url,
      connectionString,
      table,
    };
    const finished = await runScript(runtime, 'command-line.mjs', settings);
    expect({ code: finished.code, stderr: finished.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(finished.stdout)).toEqual(expectedReport(table));
  });
});

describe('in workerd', () => {
  it('runs the checks through the built bundle, in a worker’s fetch handler', async () => {
    const table = await freshTable('client_runtime_workerd');
    const workerd = await startWorkerd({
      main: 'worker.mjs',
      files: {
        'worker.mjs': path.join(FIXTURES, 'worker.mjs'),
        'checks.mjs': path.join(FIXTURES, 'checks.mjs'),
        'client.mjs': BUNDLE,
      },
    });
    try {
      const response = await fetch(workerd.url, {
        method: 'POST',
        body: JSON.stringify({ url: sqlgate.url, connectionString, table }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(expectedReport(table));
    } finally {
      await workerd.stop();
    }
  });
});

/** The value of sqlgate's metric `name` (its line without labels, or with exactly `labels`). */
async function metric(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${sqlgate.url}/metrics`)).text();
  const line = text.split('\n').find((each) => each.startsWith(`${name}${labels} `));
  return Number(line?.split(' ')[1] ?? 0);
}

describe.each(['node', 'bun', 'deno'])('a %s process about to exit inside begin()', (runtime) => {
  it('ends the session first, rolling the transaction back', async () => {
    const table = await freshTable(`client_exit_${runtime}`);
    const openBefore = await metric('sqlgate_sessions_open');
    const closedBefore = await metric('sqlgate_sessions_ended_total', '{reason="closed"}');
    const settings = {
      bundle: pathToFileURL(BUNDLE).href,
      url: sqlgate.url,
      connectionString,
      table,
    };
    const finished = await runScript(runtime, 'open-at-exit.mjs', settings);
    expect(finished).toMatchObject({ code: 0, stdout: 'inserted\n', stderr: '' });
    // Ended by the client's DELETE before the process went, not by the idle timeout.
    expect(await metric('sqlgate_sessions_open')).toBe(openBefore);
    expect(await metric('sqlgate_sessions_ended_total', '{reason="closed"}')).toBe(
      closedBefore + 1,
    );
    expect(await sql(`SELECT n FROM ${table}`)).toEqual([]);
  });
});
