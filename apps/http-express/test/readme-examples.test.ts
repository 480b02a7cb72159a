/**
 * Every program of the READMEs (readme-programs.ts) runs as written against the test database,
 * with the workspaces' builds: only the connection fields change, from the READMEs'
 * 127.0.0.1:5432 postgres/postgres to the test server's, and DB_PASSWORD is the test password. A
 * README whose example stops compiling or working fails here, not in a user's first minutes. (The
 * packages' programs and recipes also run from the packed packages: pack-install.test.ts.)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startLocalRedis, type LocalRedis } from '@sqlgate/testing';
import ts from 'typescript';
import { database } from './support';
import {
  README_PROGRAMS,
  RECIPE_README,
  REPO_ROOT,
  atTestDatabase,
  programsOf,
  recipeFilesOf,
  runProgram,
} from './readme-programs';

/** Inside the repository, so that `@sqlgate/*` resolve to the workspaces' builds. */
const SCRATCH = path.join(REPO_ROOT, 'node_modules', '.cache', 'readme-examples');

let redis: LocalRedis;
beforeAll(async () => {
  redis = await startLocalRedis();
});
afterAll(() => redis?.stop());

it('lists every README with code; only the Jest recipe is files, run from the packed packages', () => {
  const readmes = ['README.md', 'apps/http-express/README.md'].concat(
    ['core', 'postgres-adapter', 'redis-cache', 'console', 'testing', 'client'].map(
      (name) => `packages/${name}/README.md`,
    ),
  );
  expect(Object.keys(README_PROGRAMS).sort()).toEqual(readmes.sort());
  const recipes = readmes.filter((readme) => recipeFilesOf(readme).length > 0);
  expect(recipes).toEqual([RECIPE_README]);
});

describe.each(Object.keys(README_PROGRAMS))('the programs of %s', (readmePath) => {
  const programs = programsOf(readmePath);
  const expected = README_PROGRAMS[readmePath] ?? [];

  it('are all checked here', () => {
    expect(programs).toHaveLength(expected.length);
  });

  it.each(programs.map((program, index) => [index, program] as const))(
    'program %i runs as written and prints what its comments say',
    async (index, program) => {
      const { outputText, diagnostics } = ts.transpileModule(atTestDatabase(program, database), {
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
      const run = await runProgram(file, {
        cwd: SCRATCH,
        env: {
          ...process.env,
          DB_PASSWORD: database.password,
          REDIS_URL: redis.url,
          TEST_DATABASE_URL: database.connectionString,
        },
        expected: expected[index] ?? { prints: [] },
        database,
        limitMs: 60_000,
      });
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      for (const prints of expected[index]?.prints ?? []) expect(run.stdout).toMatch(prints);
      if (expected[index]?.server) {
        expect(run.answer).toMatchObject({ status: 200, body: { rows: [{ one: 1 }] } });
      }
    },
    90_000,
  );
});

it("the API section's curl examples reach the PostgreSQL of 'On your own PostgreSQL': its user, password and database", () => {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const api = readme.slice(readme.indexOf('\n## API\n'), readme.indexOf('\n## Configuration\n'));
  // The JSON of -d '...' and -F 'request=...', joined across the lines of a command.
  const bodies = [...api.matchAll(/(?:-d |-F 'request=)'?(\{[^']*\})'/g)].map(
    (match) => JSON.parse(match[1] ?? '') as Record<string, unknown>,
  );
  const targets = bodies.filter((body) => 'host' in body);
  expect(targets.length).toBeGreaterThan(5);
  for (const body of targets) {
    expect(body).toMatchObject({ user: 'postgres', password: 'secret' });
    if ('database' in body) expect(body.database).toBe('postgres');
  }
});
