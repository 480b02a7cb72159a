/**
 * The code of the READMEs, as the tests that run it see it: every ```ts and ```js block is either a
 * complete program or one file of a recipe (a block whose first line is a `// <path>` comment, such
 * as @sqlgate/testing's Jest harness). Programs reach PostgreSQL with the fields the READMEs use
 * (127.0.0.1:5432, postgres, DB_PASSWORD, database postgres), which `atTestDatabase` points at the
 * test database; what each program must print is listed here, so that a README that gains or loses
 * a program, or whose program stops printing what its comments say, fails a test.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually, type TestDatabaseSettings } from '@sqlgate/testing';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** A program that runs until SIGTERM: it prints `listening on` once it serves on PORT. */
export interface ServerProgram {
  /** A route of the server to send the README's query body to, expecting 200. */
  queryPath: string;
}

export interface ExpectedRun {
  /** What the program prints, in any order. */
  prints: RegExp[];
  /** Services the program needs besides PostgreSQL. */
  needs?: ('redis' | 'chromium' | 'pgbouncer')[];
  server?: ServerProgram;
}

/** Every README with code, and what each of its programs (in order) must print. */
export const README_PROGRAMS: Record<string, ExpectedRun[]> = {
  'README.md': [
    { prints: [/^\{ answer: 42 \}$/m, /^22012$/m] },
    { prints: [/rows: \[ \{ one: 1 \} \]/] },
    { prints: [/^sqlgate at http:\/\/127\.0\.0\.1:\d+/m, /^200 \{ status: 'ok' \}/m] },
  ],
  'packages/core/README.md': [
    { prints: [/\{ one: 1 \}/, /read write/] },
    { prints: [/\[ \{ one: 1 \} \]/] },
  ],
  'packages/postgres-adapter/README.md': [
    { prints: [/Connection successful/, /multipleResults: true/, /totalConnections: 2/] },
  ],
  'packages/redis-cache/README.md': [{ prints: [/rows: \[ \{ one: 1 \} \]/], needs: ['redis'] }],
  'packages/client/README.md': [
    { prints: [/\[ \{ greeting: 'hello' \} \]/, /^10\.00$/m, /\[ \{ n: 42 \} \] 1/] },
  ],
  'packages/console/README.md': [{ prints: [/'icon\.svg'/, /style-src 'self' 'nonce-n0nce'/] }],
  'packages/testing/README.md': [
    { prints: [/^(env|testcontainers|local-cluster) postgres:\/\//m] },
    { prints: [/^redis:\/\/127\.0\.0\.1:\d+$/m] },
    { prints: [/^127\.0\.0\.1:\d+ \S+ session$/m], needs: ['pgbouncer'] },
    { prints: [/^Hello$/m], needs: ['chromium'] },
  ],
  'apps/http-express/README.md': [
    { prints: [/^200 \{/m, /rows: \[ \{ one: 1 \} \]/] },
    { prints: [/^listening on/m], server: { queryPath: '/sqlgate/api/query' } },
  ],
};

/** The README whose code holds a recipe of several files: @sqlgate/testing's Jest harness. */
export const RECIPE_README = 'packages/testing/README.md';

export interface CodeBlock {
  language: string;
  code: string;
  /** The path a recipe's block names in its first line, e.g. `test/global-setup.js`. */
  file?: string;
}

/** The ```ts, ```js and ```jsonc blocks of a README, in order. */
export function codeBlocksOf(readmePath: string): CodeBlock[] {
  const readme = readFileSync(path.join(REPO_ROOT, readmePath), 'utf8');
  return [...readme.matchAll(/^```(ts|js|jsonc)\n([\s\S]*?)^```$/gm)].map((match) => {
    const code = match[2] ?? '';
    const file = /^\/\/ ([\w./-]+\.(?:[cm]?[jt]s|json))\n/.exec(code)?.[1];
    return { language: match[1] ?? '', code, ...(file ? { file } : {}) };
  });
}

/** The complete programs of a README: its code blocks that are not files of a recipe. */
export function programsOf(readmePath: string): string[] {
  return codeBlocksOf(readmePath)
    .filter((block) => block.file === undefined && block.language !== 'jsonc')
    .map((block) => block.code);
}

/** The files of a README's recipe, by the path each names. */
export function recipeFilesOf(readmePath: string): CodeBlock[] {
  return codeBlocksOf(readmePath).filter((block) => block.file !== undefined);
}

/** A program's connection fields, pointed at `database` (DB_PASSWORD carries the password). */
export function atTestDatabase(program: string, database: TestDatabaseSettings): string {
  return program
    .replaceAll("host: '127.0.0.1',", `host: ${JSON.stringify(database.host)},`)
    .replaceAll('port: 5432,', `port: ${database.port},`)
    .replaceAll("user: 'postgres',", `user: ${JSON.stringify(database.user)},`)
    .replaceAll("database: 'postgres',", `database: ${JSON.stringify(database.database)},`)
    .replaceAll(
      '`postgresql://postgres:${password}@127.0.0.1:5432/postgres`',
      `\`postgresql://${encodeURIComponent(database.user)}:\${password}@${database.host}:${database.port}/${encodeURIComponent(database.database)}\``,
    )
    .replaceAll(
      'postgresql://postgres@127.0.0.1:5432/postgres',
      `postgresql://${encodeURIComponent(database.user)}@${database.host}:${database.port}/${encodeURIComponent(database.database)}`,
    );
}

/** The body of a POST /api/query to the test database, as the READMEs' programs send it. */
export function queryBody(database: TestDatabaseSettings): Record<string, unknown> {
  return {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    sql: 'SELECT 1 AS one',
  };
}

export interface ProgramRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** For a server program: the status and body of the query sent to it. */
  answer?: { status: number; body: unknown };
}

/**
 * Runs a compiled program with node in `cwd`. A server program gets PORT, is sent the README's
 * query once it says it listens, then SIGTERM, which must end it; any program still running after
 * `limitMs` is killed (and its run fails on the exit code).
 */
export async function runProgram(
  file: string,
  options: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    expected: ExpectedRun;
    database: TestDatabaseSettings;
    limitMs: number;
  },
): Promise<ProgramRun> {
  const { server } = options.expected;
  const port = server ? await freePort() : undefined;
  const child = spawn(process.execPath, [file], {
    cwd: options.cwd,
    env: { ...options.env, ...(port ? { PORT: String(port) } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const limit = setTimeout(() => child.kill('SIGKILL'), options.limitMs);
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (code, signal) => resolve([code, signal])),
  );
  let answer: ProgramRun['answer'];
  try {
    if (server && port) {
      await eventually(() => /listening on/.test(stdout) || child.exitCode !== null, {
        withinMs: options.limitMs,
      });
      if (/listening on/.test(stdout)) {
        const response = await fetch(`http://127.0.0.1:${port}${server.queryPath}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(queryBody(options.database)),
        });
        answer = { status: response.status, body: await response.json() };
        child.kill('SIGTERM');
      }
    }
    const [code, signal] = await exited;
    return { code, signal, stdout, stderr, ...(answer ? { answer } : {}) };
  } finally {
    clearTimeout(limit);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** A port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
