/**
 * The README's Jest recipe runs as written: its files are taken from the README byte for byte,
 * put in a project of their own, and run with Jest. The project's node_modules is this
 * repository's, which holds what the README's install line names.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDatabaseFromEnvironment } from '../src';

const REPO_ROOT = path.join(__dirname, '..', '..', '..');
const README = path.join(__dirname, '..', 'README.md');
const JEST = path.join(REPO_ROOT, 'node_modules', 'jest', 'bin', 'jest.js');

/** The README's code blocks whose first line names a file: `// test/global-setup.js`. */
function recipeFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const [, body] of readFileSync(README, 'utf8').matchAll(/```(?:js|ts)\n([\s\S]*?)```/g)) {
    const named = /^\/\/ ([\w./-]+\.(?:js|ts))\n/.exec(body ?? '');
    if (named?.[1]) files.set(named[1], body ?? '');
  }
  return files;
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += String(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (output += String(chunk)));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

let project: string;
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

it('names the four files of a Jest harness', () => {
  expect([...recipeFiles().keys()].sort()).toEqual([
    'jest.config.js',
    'test/global-setup.js',
    'test/global-teardown.js',
    'test/orders.test.ts',
  ]);
});

it('runs as written: the global setup starts a database and the test talks to it', async () => {
  project = mkdtempSync(path.join(tmpdir(), 'sqlgate-recipe-'));
  writeFileSync(path.join(project, 'package.json'), '{ "name": "recipe", "private": true }\n');
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(project, 'node_modules'), 'dir');
  for (const [file, text] of recipeFiles()) {
    mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    writeFileSync(path.join(project, file), text);
  }
  // The recipe's global setup finds the run's database through TEST_DATABASE_URL (with its CA, so
  // the test's TLS branch runs) instead of starting another one; everything else is as a user has it.
  const database = testDatabaseFromEnvironment();
  const url = new URL(database.connectionString);
  if (database.caCertificate) {
    const caFile = path.join(project, 'ca.pem');
    writeFileSync(caFile, database.caCertificate);
    url.searchParams.set('sslrootcert', caFile);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_DATABASE_URL: url.toString() };
  delete env.SQLGATE_TEST_DATABASE;
  delete env.JEST_WORKER_ID;
  const { code, output } = await run(process.execPath, [JEST, '--ci'], { cwd: project, env });
  expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining('1 passed') });
  expect(output).toContain('talks to a real PostgreSQL');
}, 120_000);
