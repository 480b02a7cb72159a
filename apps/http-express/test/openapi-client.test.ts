/**
 * A client generated from the served OpenAPI document with openapi-typescript, as a caller would
 * generate one, must accept the README's minimal request in strict TypeScript: defaults are not
 * required fields. Runs the real generator and the real compiler.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { createTestApp, type TestApp } from './support';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const bin = (name: string): string => path.join(ROOT, 'node_modules', '.bin', name);

let testApp: TestApp;
let directory: string;

/** The body of the curl example of README's Quick start. */
async function readmeMinimalRequest(): Promise<Record<string, unknown>> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const quickStart = readme.slice(readme.indexOf('## Quick start'));
  const body = /-d '([^']+)'/.exec(quickStart)?.[1];
  if (!body) throw new Error('README Quick start has no curl -d example');
  return JSON.parse(body) as Record<string, unknown>;
}

/** Runs tsc in strict mode over `files` of the directory; resolves to its output, rejects on errors. */
async function compile(...files: string[]): Promise<void> {
  await run(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--strict',
      '--exactOptionalPropertyTypes',
      '--noEmit',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'commonjs',
      ...files.map((file) => path.join(directory, file)),
    ],
    { cwd: directory },
  );
}

const usage = (body: Record<string, unknown>): string => `
import type { paths } from './api';
type Operation = paths['/api/query']['post'];
type Body = Operation['requestBody']['content']['application/json'];
type Answer = Operation['responses'][200]['content']['application/json'];
export const body: Body = ${JSON.stringify(body)};
export const warnings = (answer: Answer): string[] | undefined => answer.warnings;
`;

beforeAll(async () => {
  testApp = createTestApp();
  directory = await mkdtemp(path.join(tmpdir(), 'sqlgate-openapi-client-'));
  const served = await request(testApp.app).get('/api/openapi.json');
  expect(served.status).toBe(200);
  await writeFile(path.join(directory, 'openapi.json'), JSON.stringify(served.body));
  await run(bin('openapi-typescript'), ['openapi.json', '-o', 'api.ts'], { cwd: directory });
}, 60_000);

afterAll(async () => {
  await testApp.close();
  await rm(directory, { recursive: true, force: true });
});

it('compiles the README minimal request against the generated types', async () => {
  const body = await readmeMinimalRequest();
  expect(Object.keys(body)).toEqual(
    expect.arrayContaining(['host', 'port', 'user', 'password', 'database', 'sql']),
  );
  await writeFile(path.join(directory, 'minimal.ts'), usage(body));
  await expect(compile('minimal.ts')).resolves.toBeUndefined();
}, 60_000);

it('refuses, in the same compiler, a request without sql or with a misspelled option', async () => {
  const body = await readmeMinimalRequest();
  const { sql: _sql, ...withoutSql } = body;
  await writeFile(path.join(directory, 'no-sql.ts'), usage(withoutSql));
  await expect(compile('no-sql.ts')).rejects.toMatchObject({
    stdout: expect.stringContaining("Property 'sql' is missing"),
  });
  await writeFile(path.join(directory, 'typo.ts'), usage({ ...body, maxrows: 5 }));
  await expect(compile('typo.ts')).rejects.toMatchObject({
    stdout: expect.stringMatching(/'"?maxrows"?' does not exist/),
  });
}, 60_000);
