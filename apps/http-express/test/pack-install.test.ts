/**
 * The packages as a user gets them: every workspace package is packed with `npm pack`, the tarballs
 * are installed into a scratch project outside the repository, and that project requires the
 * packages by name, runs a query through the server against the test database, and runs the bin.
 * Catches what the in-repository tests cannot see: a file missing from `files`, an exports map
 * pointing nowhere, a dependency declared only in the workspace root.
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testDatabaseFromEnvironment } from '@sqlgate/testing';
import { pathWithoutPostgres } from './demo-support';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const TYPESCRIPT_COMPILER = require.resolve('typescript/bin/tsc', { paths: [REPO_ROOT] });

interface Workspace {
  name: string;
  directory: string;
}

const WORKSPACES: Workspace[] = [
  { name: '@sqlgate/core', directory: 'packages/core' },
  { name: '@sqlgate/postgres-adapter', directory: 'packages/postgres-adapter' },
  { name: '@sqlgate/redis-cache', directory: 'packages/redis-cache' },
  { name: '@sqlgate/testing', directory: 'packages/testing' },
  { name: '@sqlgate/console', directory: 'packages/console' },
  { name: '@sqlgate/http-express', directory: 'apps/http-express' },
];

const SETUP_TIMEOUT_MS = 300_000;
const INSTALL_TIMEOUT_MS = 240_000;

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

/** Runs a program to its end and collects its output; never rejects on a non-zero exit. */
function run(command: string, args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Like `run`, but a non-zero exit (or a kill after the time limit) is an error that shows the output. */
async function runOk(command: string, args: string[], options: RunOptions): Promise<RunResult> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    const how = result.signal
      ? `was killed with ${result.signal} (time limit ${options.timeoutMs} ms)`
      : `exited with ${result.code}`;
    throw new Error(
      `\`${[command, ...args].join(' ')}\` in ${options.cwd} ${how}\n--- stdout\n${result.stdout.slice(-4000)}\n--- stderr\n${result.stderr.slice(-4000)}`,
    );
  }
  return result;
}

/**
 * npm's own settings (registry, cache, certificates) come from the environment and the user's
 * .npmrc; what an enclosing `npm run` adds for its script, such as the workspace root as the local
 * prefix, would point npm back into this repository and is dropped.
 */
const SCRIPT_ONLY_VARIABLES = new Set([
  'npm_command',
  'npm_config_call',
  'npm_config_local_prefix',
  'npm_config_workspace',
  'npm_config_workspaces',
  'npm_config_include_workspace_root',
  'INIT_CWD',
]);

function npmEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_)/.test(name) || SCRIPT_ONLY_VARIABLES.has(name)) continue;
    env[name] = value;
  }
  return {
    ...env,
    npm_config_loglevel: 'error',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
  };
}

/** A bare environment for the programs of the scratch project: no PORT, no NODE_PATH, nothing of sqlgate's. */
function plainEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'TEMP', 'TMP', 'SystemRoot', 'LANG']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return { ...env, ...extra };
}

function ensureBuilt(): Promise<unknown> | undefined {
  const missing = WORKSPACES.filter(
    ({ directory }) => !existsSync(path.join(REPO_ROOT, directory, 'dist', 'index.js')),
  );
  if (missing.length === 0) return undefined;
  return runOk('npm', ['run', 'build'], {
    cwd: REPO_ROOT,
    env: npmEnvironment(),
    timeoutMs: 180_000,
  });
}

interface PackedWorkspace extends Workspace {
  tarball: string;
  /** Paths inside the tarball, without the leading `package/`. */
  files: string[];
  manifest: {
    main?: string;
    types?: string;
    bin?: Record<string, string>;
    exports?: Record<string, string | Record<string, string>>;
  };
}

async function pack(workspace: Workspace, destination: string): Promise<PackedWorkspace> {
  mkdirSync(destination, { recursive: true });
  const cwd = path.join(REPO_ROOT, workspace.directory);
  await runOk('npm', ['pack', '--pack-destination', destination], {
    cwd,
    env: npmEnvironment(),
    timeoutMs: 60_000,
  });
  const tarballs = readdirSync(destination).filter((file) => file.endsWith('.tgz'));
  if (tarballs.length !== 1)
    throw new Error(`npm pack in ${workspace.directory} left ${tarballs.length} tarballs`);
  const tarball = path.join(destination, tarballs[0] as string);
  const listing = await runOk('tar', ['-tzf', tarball], {
    cwd: destination,
    env: plainEnvironment(),
    timeoutMs: 30_000,
  });
  const files = listing.stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''));
  const manifest = JSON.parse(
    readFileSync(path.join(cwd, 'package.json'), 'utf8'),
  ) as PackedWorkspace['manifest'];
  return { ...workspace, tarball, files, manifest };
}

/** Every file the manifest points at: main, types, bin and the targets of the exports map. */
function filesNamedBy(manifest: PackedWorkspace['manifest']): string[] {
  const named: string[] = [];
  const add = (target: unknown): void => {
    if (typeof target === 'string') named.push(target.replace(/^\.\//, ''));
    else if (target && typeof target === 'object') Object.values(target).forEach(add);
  };
  add(manifest.main);
  add(manifest.types);
  add(manifest.bin);
  add(manifest.exports);
  return [...new Set(named)];
}

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
  let root: string;
  let project: string;
  let packed: PackedWorkspace[] = [];

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'sqlgate-pack-'));
    if (!path.relative(REPO_ROOT, root).startsWith('..')) {
      throw new Error(`the scratch directory ${root} must be outside the repository ${REPO_ROOT}`);
    }
    await ensureBuilt();
    packed = [];
    for (const workspace of WORKSPACES) {
      packed.push(
        await pack(workspace, path.join(root, 'tarballs', workspace.directory.replace(/\//g, '-'))),
      );
    }
    project = path.join(root, 'project');
    mkdirSync(project);
    await runOk('npm', ['init', '-y'], { cwd: project, env: npmEnvironment(), timeoutMs: 60_000 });
    // All the tarballs in one install: npm satisfies the @sqlgate/* dependencies (version 0.1.0)
    // between them from the tarballs, and fetches only the third-party packages.
    await runOk(
      'npm',
      ['install', ...packed.map(({ tarball }) => tarball), '--no-audit', '--no-fund'],
      {
        cwd: project,
        env: npmEnvironment(),
        timeoutMs: INSTALL_TIMEOUT_MS,
      },
    );
  }, SETUP_TIMEOUT_MS);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('ship compiled JavaScript with declarations and a README, no sources, tests or build info', () => {
    for (const { name, files, manifest } of packed) {
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
      const missing = ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts'].filter(
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
    const server = packed.find(({ name }) => name === '@sqlgate/http-express');
    expect(server?.files).toContain('dist/bin.js');
    const consoleFiles = packed.find(({ name }) => name === '@sqlgate/console')?.files ?? [];
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

  it('type-check a TypeScript consumer through the exports maps', async () => {
    const consumer = [
      "import { createQueryService, MemoryCacheStore, splitSql, type QueryServiceResponse } from '@sqlgate/core';",
      "import { createPostgresConnections, type PostgresConnectionsOptions } from '@sqlgate/postgres-adapter';",
      "import { createApp, startServer, type RunningServer, type StartServerOptions } from '@sqlgate/http-express';",
      '',
      'export async function main(): Promise<void> {',
      '  const limits: PostgresConnectionsOptions = { max: 5, connectTimeoutMs: 2000 };',
      '  const service = createQueryService({ connections: createPostgresConnections(limits), cacheStore: new MemoryCacheStore() });',
      "  const response: QueryServiceResponse = await service.execute({ sql: 'SELECT 1' });",
      '  const poolWaitMs: number = response.timings.poolWaitMs;',
      "  const statements: string[] = splitSql('SELECT 1; SELECT 2');",
      '  createApp({ service });',
      "  const options: StartServerOptions = { port: 0, hostname: '127.0.0.1' };",
      '  const server: RunningServer = await startServer(options);',
      '  const url: string = server.url;',
      '  await server.close();',
      '  void [poolWaitMs, statements, url];',
      '}',
      '',
    ].join('\n');
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'ESNext.Disposable'],
        module: 'Node16',
        moduleResolution: 'Node16',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
      },
      files: ['consumer.ts'],
    };
    writeFileSync(path.join(project, 'consumer.ts'), consumer);
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
    await runOk(process.execPath, [TYPESCRIPT_COMPILER, '-p', '.'], {
      cwd: project,
      env: plainEnvironment(),
      timeoutMs: 60_000,
    });
  }, 90_000);

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
