/**
 * The packages as a user gets them (pack-install/scratch-project.ts): a project outside the
 * repository installs the packed tarballs, requires the packages by name, runs a query through the
 * server against the test database, and runs the bin. Then it installs what @sqlgate/testing's Jest
 * recipe says, which brings the latest TypeScript (7) as `tsc` and TypeScript 6 for ts-jest, and
 * runs that recipe, every program of the packages' READMEs compiled by TypeScript 7, and a consumer
 * type-checked under every module resolution. Catches what the in-repository tests cannot see: a
 * file missing from `files`, an exports map pointing nowhere, a dependency declared only in the
 * workspace root, declarations that need an optional peer.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startLocalRedis, testDatabaseFromEnvironment, type LocalRedis } from '@sqlgate/testing';
import {
  README_PROGRAMS,
  RECIPE_README,
  REPO_ROOT,
  atTestDatabase,
  programsOf,
  recipeFilesOf,
  runProgram,
} from './readme-programs';
import {
  createScratchProject,
  filesNamedBy,
  INSTALL_TIMEOUT_MS,
  npmEnvironment,
  plainEnvironment,
  run,
  runOk,
  type ScratchProject,
} from './pack-install/scratch-project';
import { pathWithoutPostgres } from './demo-support';

/** The packages' READMEs, whose programs run here from the tarballs. */
const PACKAGE_READMES = Object.keys(README_PROGRAMS).filter((readme) => readme !== 'README.md');

/**
 * The install line of @sqlgate/testing's Jest recipe as its README gives it, the package itself
 * taken from its tarball.
 */
function recipeInstallCommand(testingTarball: string): string {
  const readme = readFileSync(path.join(REPO_ROOT, RECIPE_README), 'utf8');
  const command = /^npm install --save-dev jest (?:.*\\\n)*.*/m.exec(readme)?.[0];
  if (!command) throw new Error(`${RECIPE_README} has no npm install line for its Jest recipe`);
  return command.replace(/\\\n\s*/g, '').replace(/ @sqlgate\/testing /, ` ${testingTarball} `);
}

/** Each way a consumer's TypeScript may resolve modules, and the compiler that has it. */
const RESOLUTIONS: Record<string, { compiler: 'tsc' | 'tsc6'; options: object }> = {
  node16: { compiler: 'tsc', options: { module: 'node16', moduleResolution: 'node16' } },
  nodenext: { compiler: 'tsc', options: { module: 'nodenext', moduleResolution: 'nodenext' } },
  bundler: { compiler: 'tsc', options: { module: 'preserve', moduleResolution: 'bundler' } },
  // TypeScript 7 has no `node` (node10) resolution any more: a project that keeps it is on 6.
  node10: {
    compiler: 'tsc6',
    options: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' },
  },
};

/** A consumer of the main entry points: what declarations they need, and nothing more. */
const MAIN_ENTRY_CONSUMER = `
import { createQueryService, MemoryCacheStore, splitSql, type QueryRequest, type QueryServiceResponse } from '@sqlgate/core';
import { createPostgresConnections, type PostgresConnectionsOptions } from '@sqlgate/postgres-adapter';
import { createApp, startServer, type RunningServer, type StartServerOptions } from '@sqlgate/http-express';
import { eventually, startTestDatabase, type TestDatabase } from '@sqlgate/testing';

export async function main(): Promise<void> {
  const limits: PostgresConnectionsOptions = { max: 5, connectTimeoutMs: 2000 };
  const service = createQueryService({ connections: createPostgresConnections(limits), cacheStore: new MemoryCacheStore() });
  const request: QueryRequest = {
    target: { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres', sslMode: 'prefer' },
    sql: 'SELECT 1',
    options: { rowMode: 'object', readOnly: false, dryRun: false },
  };
  const response: QueryServiceResponse = await service.execute(request);
  const poolWaitMs: number = response.timings.poolWaitMs;
  const statements: string[] = splitSql('SELECT 1; SELECT 2');
  createApp({ service });
  const options: StartServerOptions = { port: 0, hostname: '127.0.0.1' };
  const server: RunningServer = await startServer(options);
  const database: TestDatabase = await startTestDatabase();
  await eventually(() => database.port > 0, { withinMs: 1000 });
  await server.close();
  void [poolWaitMs, statements, server.url];
}
`;

const CHROMIUM_CONSUMER = `
import { startChromium, type RunningChromium } from '@sqlgate/testing/chromium';

export async function main(): Promise<string | null> {
  const chromium: RunningChromium = await startChromium({ viewport: { width: 800, height: 600 } });
  const page = await chromium.context.newPage();
  await chromium.close();
  return page.url();
}
`;

const database = testDatabaseFromEnvironment();
const target = {
  host: database.host,
  port: database.port,
  user: database.user,
  password: database.password,
  database: database.database,
};

/** Whether a process of the group is still there after `limitMs`. */
async function untilGroupEnds(group: number, limitMs: number): Promise<boolean> {
  const alive = (): boolean => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (let waited = 0; alive() && waited < limitMs; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return alive();
}

describe('the packed packages, installed outside the repository', () => {
  let scratch: ScratchProject;
  let project: string;

  /** Runs a program of the project's node_modules/.bin, failing with its output. */
  const bin = (name: string, args: string[], cwd = project) =>
    runOk(path.join(project, 'node_modules', '.bin', name), args, {
      cwd,
      env: plainEnvironment(),
      timeoutMs: 120_000,
    });

  /**
   * Type-checks `source` under one module resolution, with every declaration it reaches and only
   * the global types named in `types`.
   */
  async function typeCheck(
    name: string,
    source: string,
    resolution: string,
    types: string[] = [],
  ): Promise<void> {
    const { compiler, options } = RESOLUTIONS[resolution] as (typeof RESOLUTIONS)[string];
    const directory = path.join(project, 'consumers', `${name}-${resolution}`);
    mkdirSync(directory, { recursive: true });
    writeFileSync(path.join(directory, 'consumer.ts'), source);
    const compilerOptions = {
      target: 'es2022',
      lib: ['es2022', 'esnext.disposable', 'dom'],
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types,
      ...options,
    };
    writeFileSync(
      path.join(directory, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['consumer.ts'] }, null, 2),
    );
    await bin(compiler, ['-p', '.'], directory);
  }

  beforeAll(async () => {
    scratch = await createScratchProject();
    project = scratch.project;
    const testing = scratch.packed.find(({ name }) => name === '@sqlgate/testing');
    await runOk('sh', ['-c', recipeInstallCommand(testing?.tarball as string)], {
      cwd: project,
      env: npmEnvironment(),
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
  }, 600_000);

  afterAll(() => scratch?.remove());

  it('ship compiled JavaScript with declarations and a README, no sources, tests or build info', () => {
    for (const { name, files, manifest } of scratch.packed) {
      const unwanted = files.filter(
        (file) =>
          /^(src|test|tests|node_modules)\//.test(file) ||
          /\.tsbuildinfo$/.test(file) ||
          /(^|\/)tsconfig[^/]*\.json$/.test(file) ||
          (/\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file)),
      );
      // The console's browser assets (dist/assets/) are files a server sends, not modules.
      const withoutDeclarations = files
        .filter((file) => file.startsWith('dist/') && !file.startsWith('dist/assets/'))
        .filter((file) => file.endsWith('.js'))
        .filter((file) => !files.includes(file.replace(/\.js$/, '.d.ts')));
      const namedButMissing = filesNamedBy(manifest).filter((file) => !files.includes(file));
      // The entry points themselves are the manifest's to name (namedButMissing): the client's are
      // .mjs and .cjs.
      const missing = ['package.json', 'README.md', 'dist/index.d.ts'].filter(
        (file) => !files.includes(file),
      );
      expect({ name, missing, namedButMissing, withoutDeclarations, unwanted }).toEqual({
        name,
        missing: [],
        namedButMissing: [],
        withoutDeclarations: [],
        unwanted: [],
      });
    }
    const server = scratch.packed.find(({ name }) => name === '@sqlgate/http-express');
    expect(server?.files).toContain('dist/bin.js');
    const consoleFiles =
      scratch.packed.find(({ name }) => name === '@sqlgate/console')?.files ?? [];
    expect(consoleFiles).toEqual(
      expect.arrayContaining([
        'dist/assets/index.html',
        'dist/assets/icon.svg',
        expect.stringMatching(/^dist\/assets\/console-[A-Z0-9]+\.js$/),
        expect.stringMatching(/^dist\/assets\/console-[A-Z0-9]+\.css$/),
      ]),
    );
  });

  it('are required by name, run a query as a library and through the server, and let the process exit', async () => {
    copyFileSync(
      path.join(__dirname, 'pack-install', 'consumer.cjs'),
      path.join(project, 'consumer.cjs'),
    );
    const result = await runOk(process.execPath, ['consumer.cjs'], {
      cwd: project,
      env: plainEnvironment({ SQLGATE_PACK_TARGET: JSON.stringify(target) }),
      timeoutMs: 60_000,
    });
    const output = JSON.parse(result.stdout.trim().split('\n').pop() as string);

    for (const file of Object.values(output.resolved as Record<string, string>)) {
      expect(path.relative(path.join(project, 'node_modules'), file).startsWith('..')).toBe(false);
    }
    expect(output.missingExports).toEqual([]);
    expect(output.library).toMatchObject({
      body: { rows: [{ two: 2 }], rowCount: 1, command: 'SELECT' },
      failure: null,
      timingKeys: ['executionMs', 'poolWaitMs'],
    });
    expect(output.split).toEqual(["SELECT 'a;  b'", 'SELECT 2']);
    expect(output.classes).toEqual(['read', 'write']);
    expect(output.consolePage).toEqual({
      status: 200,
      type: 'text/html; charset=utf-8',
      script: 200,
      scriptBytes: expect.any(Number),
    });
    expect(output.consolePage.scriptBytes).toBeGreaterThan(100_000);
    expect(output.query.status).toBe(200);
    expect(output.query.body).toMatchObject({
      rows: [{ one: 1 }],
      rowCount: 1,
      command: 'SELECT',
      statement: 'SELECT 1 AS one',
    });
  }, 90_000);

  it('type-check a consumer of the main entry points without playwright-core, however it resolves modules', async () => {
    // @sqlgate/testing's optional peer: the main entry point's declarations must not need it.
    expect(existsSync(path.join(project, 'node_modules', 'playwright-core'))).toBe(false);
    for (const resolution of Object.keys(RESOLUTIONS)) {
      await typeCheck('main', MAIN_ENTRY_CONSUMER, resolution);
    }
    // The compiler is the latest TypeScript, as `npm install` gives it.
    expect((await bin('tsc', ['-v'])).stdout).toMatch(/^Version 7\./);
  }, 300_000);

  it('install the sqlgate bin, which refuses a bad PORT with one line naming it', async () => {
    const bin = path.join(project, 'node_modules', '.bin', 'sqlgate');
    expect(existsSync(bin)).toBe(true);
    const result = await run(bin, [], {
      cwd: project,
      env: plainEnvironment({ PORT: 'abc' }),
      timeoutMs: 30_000,
    });
    expect(result.signal).toBeNull();
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/\bPORT\b/);
  }, 30_000);

  it("run @sqlgate/testing's Jest recipe as its README gives it: Jest passes, TypeScript 7 accepts it", async () => {
    const recipe = path.join(project, 'recipe');
    for (const { file, code } of recipeFilesOf(RECIPE_README)) {
      mkdirSync(path.dirname(path.join(recipe, file as string)), { recursive: true });
      writeFileSync(path.join(recipe, file as string), code);
    }
    const jest = await bin('jest', [], recipe);
    expect(jest.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(jest.stderr).not.toMatch(/ts-jest\[config\] \(WARN\)/);
    await bin('tsc', ['-p', '.'], recipe);
  }, 300_000);

  it("run every program of the packages' READMEs, compiled by TypeScript 7, and the chromium entry point however modules resolve", async () => {
    // What the READMEs say to install for the programs that need more: a browser driver, express.
    await runOk(
      'npm',
      ['install', 'playwright-core', 'express', '@types/express', '--no-audit', '--no-fund'],
      { cwd: project, env: npmEnvironment(), timeoutMs: INSTALL_TIMEOUT_MS },
    );
    for (const resolution of Object.keys(RESOLUTIONS)) {
      // playwright-core's own declarations need Node's.
      await typeCheck('chromium', CHROMIUM_CONSUMER, resolution, ['node']);
    }
    const programs = path.join(project, 'programs');
    mkdirSync(programs, { recursive: true });
    const written = PACKAGE_READMES.flatMap((readme) =>
      programsOf(readme).map((program, index) => {
        const name = `${readme.replace(/\/README\.md$/, '').replaceAll('/', '-')}-${index}`;
        writeFileSync(path.join(programs, `${name}.ts`), atTestDatabase(program, database));
        return { readme, index, name };
      }),
    );
    const compilerOptions = {
      target: 'es2022',
      lib: ['es2022', 'esnext.disposable', 'dom'],
      module: 'nodenext',
      strict: true,
      types: ['node'],
      outDir: 'out',
    };
    writeFileSync(
      path.join(programs, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, include: ['*.ts'] }, null, 2),
    );
    await bin('tsc', ['-p', '.'], programs);

    const redis: LocalRedis = await startLocalRedis();
    try {
      for (const { readme, index, name } of written) {
        const expected = README_PROGRAMS[readme]?.[index] ?? { prints: [] };
        const outcome = await runProgram(path.join(programs, 'out', `${name}.js`), {
          cwd: programs,
          env: plainEnvironment({
            DB_PASSWORD: database.password,
            REDIS_URL: redis.url,
            TEST_DATABASE_URL: database.connectionString,
          }),
          expected,
          database,
          limitMs: 60_000,
        });
        expect({ name, code: outcome.code, stderr: outcome.stderr }).toEqual({
          name,
          code: 0,
          stderr: '',
        });
        for (const prints of expected.prints) expect(outcome.stdout).toMatch(prints);
        if (expected.server) {
          expect(outcome.answer).toMatchObject({ status: 200, body: { rows: [{ one: 1 }] } });
        }
      }
    } finally {
      await redis.stop();
    }
  }, 600_000);

  it('run `npx sqlgate --demo` on the embedded database with no PostgreSQL on the PATH, and stop on SIGTERM', async () => {
    // Its own process group: SIGTERM reaches npx and the sqlgate it runs, as Ctrl-C would.
    const child = spawn('npx', ['sqlgate', '--demo'], {
      cwd: project,
      env: { ...plainEnvironment({ PORT: '0', LOG_LEVEL: 'info' }), PATH: pathWithoutPostgres() },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          output += chunk;
          const line = stdout.split('\n').find((each) => each.includes('"sqlgate listening"'));
          if (line) resolve((JSON.parse(line) as { url: string }).url);
        });
        void exited.then(() => reject(new Error(`npx sqlgate --demo ended:\n${output}`)));
      });
      const answer = await fetch(`${url}/api/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql: 'SELECT 1' }),
      });
      expect({ status: answer.status, body: await answer.json() }).toMatchObject({
        status: 200,
        body: { rows: [{ '?column?': 1 }] },
      });
      // As Ctrl-C does: npx runs the bin through `sh -c`, which would not pass a signal of its own on.
      process.kill(-(child.pid as number), 'SIGTERM');
      await exited;
      const left = await untilGroupEnds(child.pid as number, 30_000);
      expect({ left, output }).toEqual({
        left: false,
        output: expect.stringContaining('"msg":"shutting down"'),
      });
    } finally {
      if (await untilGroupEnds(child.pid as number, 0))
        process.kill(-(child.pid as number), 'SIGKILL');
    }
  }, 180_000);
});
