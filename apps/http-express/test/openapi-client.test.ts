/**
 * A client generated from the document the server serves (GET /api/openapi.json) with
 * openapi-typescript, as a caller would generate one, used the way a caller uses it: in strict
 * TypeScript it accepts the README's request (defaults are not required fields), narrows an
 * answer to one result or several, reads rows' values and fields, and tells the error bodies
 * apart. The code is compiled by the real compiler, then run against the server.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { startServer, type RunningServer } from '../src/server';
import { database } from './support';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const bin = (name: string): string => path.join(ROOT, 'node_modules', '.bin', name);

let server: RunningServer;
let directory: string;

/** The body of the first curl example of README's POST /api/query section. */
async function readmeRequest(): Promise<Record<string, unknown>> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### POST /api/query'));
  const body = /-d '([^']+)'/.exec(section)?.[1];
  if (!body) throw new Error('README POST /api/query has no curl -d example');
  return JSON.parse(body) as Record<string, unknown>;
}

/** Runs tsc in strict mode over `files` of the directory, emitting CommonJS; rejects with its errors. */
async function compile(...files: string[]): Promise<void> {
  await run(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--strict',
      '--exactOptionalPropertyTypes',
      '--noUncheckedIndexedAccess',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--lib',
      'es2022,dom',
      '--module',
      'commonjs',
      '--typeRoots',
      path.join(ROOT, 'node_modules', '@types'),
      '--types',
      'node',
      '--outDir',
      'out',
      ...files.map((file) => path.join(directory, file)),
    ],
    { cwd: directory },
  ).catch((error: { stdout?: string }) => {
    throw Object.assign(new Error(`tsc: ${error.stdout ?? ''}`), { stdout: error.stdout });
  });
}

const usage = (body: Record<string, unknown>): string => `
import type { paths } from './api';
type Operation = paths['/api/query']['post'];
type Body = Operation['requestBody']['content']['application/json'];
type Answer = Operation['responses'][200]['content']['application/json'];
export const body: Body = ${JSON.stringify(body)};
export const warnings = (answer: Answer): string[] | undefined => answer.warnings;
`;

/**
 * A caller's code: every body a status may carry, whatever its media type, as openapi-fetch types
 * its \`data\` and \`error\`; narrowed with \`in\`, rows read by column name or position.
 */
const REALISTIC_USE = `
import type { components, paths } from './api';

type Operation = paths['/api/query']['post'];
type Responses = Operation['responses'];
type BodyOf<R> = R extends { content: infer C } ? C[keyof C] : never;
type Data = BodyOf<Responses[200]>;
type ErrorBody = BodyOf<Responses[Exclude<keyof Responses, 200>]>;
type Value = components['schemas']['Value'];
type Field = components['schemas']['FieldDescription'];
type Row = components['schemas']['Rows'][number];
export type Request = Operation['requestBody']['content']['application/json'];

/** A row's values in column order, whichever rowMode the request asked for. */
function cells(row: Row, fields: Field[]): Value[] {
  return Array.isArray(row) ? row : fields.map((field) => row[field.name] ?? null);
}

function describeValue(value: Value): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return value;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** One line per row ("name:type=value, ..."), or one per statement; errors as "error: ...". */
export async function query(baseUrl: string, request: Request): Promise<string[]> {
  const response = await fetch(baseUrl + '/api/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (!response.ok) {
    const failure = (await response.json()) as ErrorBody;
    const error = failure.error;
    if (typeof error === 'string') return ['error: ' + error];
    const where = 'statementIndex' in error && error.statementIndex !== undefined ? ' at ' + error.statementIndex : '';
    return ['error: ' + error.code + where + ' ' + error.message];
  }
  const data = (await response.json()) as Data;
  if ('rows' in data) {
    return data.rows.map((row) => {
      const values = cells(row, data.fields);
      return data.fields
        .map((field, index) => field.name + ':' + field.dataTypeName + '=' + describeValue(values[index] ?? null))
        .join(', ');
    });
  }
  if ('results' in data) {
    return data.results.map((result, index) =>
      'cause' in result ? index + ': failed ' + result.cause.code : index + ': ' + result.command + ' ' + result.rowCount,
    );
  }
  return ['a streamed line: ' + JSON.stringify(data)];
}
`;

const RUN_IT = `
import { query, type Request } from './use';

async function main(): Promise<void> {
  const [baseUrl, target] = [process.argv[2] as string, JSON.parse(process.argv[3] as string) as Omit<Request, 'sql'>];
  for (const request of [
    { ...target, sql: "SELECT 1 AS one, 'x' AS letter, NULL::int AS nothing, '{\\"a\\": [1]}'::jsonb AS doc" },
    { ...target, sql: 'SELECT 1 AS one, 2 AS two', rowMode: 'array' as const },
    { ...target, sql: 'SELECT 1 AS a; SELECT 2 AS b' },
    { ...target, sql: 'SELECT 1; SELECT 1/0' },
    { ...target, sql: 'SELECT * FROM no_such_table' },
    { ...target, sql: '' },
  ]) {
    console.log((await query(baseUrl, request)).join(' | '));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;

beforeAll(async () => {
  server = await startServer({ port: 0, hostname: '127.0.0.1', logger: pino({ level: 'silent' }) });
  directory = await mkdtemp(path.join(tmpdir(), 'sqlgate-openapi-client-'));
  const served = await fetch(`${server.url}/api/openapi.json`);
  expect(served.status).toBe(200);
  await writeFile(path.join(directory, 'openapi.json'), await served.text());
  await run(bin('openapi-typescript'), ['openapi.json', '-o', 'api.ts'], { cwd: directory });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(directory, { recursive: true, force: true });
});

it('compiles the README request against the generated types', async () => {
  const body = await readmeRequest();
  expect(Object.keys(body)).toEqual(
    expect.arrayContaining(['host', 'port', 'user', 'password', 'database', 'sql']),
  );
  await writeFile(path.join(directory, 'minimal.ts'), usage(body));
  await expect(compile('minimal.ts')).resolves.toBeUndefined();
}, 60_000);

it('refuses, in the same compiler, a request without sql or with a misspelled option', async () => {
  const body = await readmeRequest();
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

it("compiles a caller's use of the answers, narrowing them, and it reads what the server sends", async () => {
  await writeFile(path.join(directory, 'use.ts'), REALISTIC_USE);
  await writeFile(path.join(directory, 'run-it.ts'), RUN_IT);
  await expect(compile('use.ts', 'run-it.ts')).resolves.toBeUndefined();
  const target = {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
  };
  const { stdout } = await run(
    process.execPath,
    [path.join(directory, 'out', 'run-it.js'), server.url, JSON.stringify(target)],
    { cwd: directory },
  );
  expect(stdout.trim().split('\n')).toEqual([
    'one:int4=1, letter:text=x, nothing:int4=NULL, doc:jsonb={"a":[1]}',
    'one:int4=1, two:int4=2',
    '0: SELECT 1 | 1: SELECT 1',
    'error: One or more statements failed',
    'error: 42P01 at 0 relation "no_such_table" does not exist',
    'error: Missing required fields',
  ]);
}, 60_000);
