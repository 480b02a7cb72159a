/**
 * Every complete program in the packages' READMEs (a ```ts block with `async function main`) runs
 * as written against the test database: only the connection fields change, from the README's
 * 127.0.0.1:5432 postgres/postgres to the test server's, and DB_PASSWORD is the test password. A
 * README whose example stops compiling or working fails here, not in a user's first minutes.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { database } from './support';

const REPO_ROOT = path.join(__dirname, '..', '..', '..');
/** Inside the repository, so that `@sqlgate/*` resolve to the workspaces' builds. */
const SCRATCH = path.join(REPO_ROOT, 'node_modules', '.cache', 'readme-examples');

/** What each README's programs must print, in order, for the example to count as working. */
const EXPECTED: Record<string, RegExp[][]> = {
  'packages/core/README.md': [[/\{ one: 1 \}/, /read write/], [/\[ \{ one: 1 \} \]/]],
  'packages/postgres-adapter/README.md': [
    [/Connection successful/, /multipleResults: true/, /totalConnections: 2/],
  ],
  'apps/http-express/README.md': [[/^200 \{/m, /rows: \[ \{ one: 1 \} \]/]],
};

function programsOf(readme: string): string[] {
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
  return blocks.filter((block) => block.includes('async function main'));
}

/** The README's connection fields, pointed at the test database. */
function atTestDatabase(program: string): string {
  return program
    .replaceAll("host: '127.0.0.1',", `host: ${JSON.stringify(database.host)},`)
    .replaceAll('port: 5432,', `port: ${database.port},`)
    .replaceAll("user: 'postgres',", `user: ${JSON.stringify(database.user)},`)
    .replaceAll("database: 'postgres',", `database: ${JSON.stringify(database.database)},`);
}

describe.each(Object.keys(EXPECTED))('the programs of %s', (readmePath) => {
  const programs = programsOf(readFileSync(path.join(REPO_ROOT, readmePath), 'utf8'));

  it('are all checked here', () => {
    expect(programs).toHaveLength(EXPECTED[readmePath]?.length ?? 0);
  });

  it.each(programs.map((program, index) => [index, program] as const))(
    'program %i runs as written and prints what its comments say',
    (index, program) => {
      const { outputText, diagnostics } = ts.transpileModule(atTestDatabase(program), {
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
        },
        reportDiagnostics: true,
      });
      expect(diagnostics ?? []).toEqual([]);
      mkdirSync(SCRATCH, { recursive: true });
      const file = path.join(SCRATCH, `${readmePath.replaceAll('/', '_')}-${index}.cjs`);
      writeFileSync(file, outputText);
      const run = spawnSync(process.execPath, [file], {
        env: { ...process.env, DB_PASSWORD: database.password },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      for (const expected of EXPECTED[readmePath]?.[index] ?? []) {
        expect(run.stdout).toMatch(expected);
      }
    },
    30_000,
  );
});
