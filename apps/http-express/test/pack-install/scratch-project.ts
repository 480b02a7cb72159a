/**
 * A project outside the repository with the packed packages installed, as a user gets them: every
 * workspace package is packed with `npm pack` and all the tarballs are installed in one `npm
 * install`, which satisfies the @sqlgate/* dependencies between them from the tarballs and fetches
 * only the third-party packages. Also how its programs are run.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../readme-programs';

export interface Workspace {
  name: string;
  directory: string;
}

export const WORKSPACES: Workspace[] = [
  { name: '@sqlgate/core', directory: 'packages/core' },
  { name: '@sqlgate/postgres-adapter', directory: 'packages/postgres-adapter' },
  { name: '@sqlgate/redis-cache', directory: 'packages/redis-cache' },
  { name: '@sqlgate/testing', directory: 'packages/testing' },
  { name: '@sqlgate/console', directory: 'packages/console' },
  { name: '@sqlgate/client', directory: 'packages/client' },
  { name: '@sqlgate/http-express', directory: 'apps/http-express' },
];

export const INSTALL_TIMEOUT_MS = 240_000;

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

/** Runs a program to its end and collects its output; never rejects on a non-zero exit. */
export function run(command: string, args: string[], options: RunOptions): Promise<RunResult> {
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
export async function runOk(
  command: string,
  args: string[],
  options: RunOptions,
): Promise<RunResult> {
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

export function npmEnvironment(): NodeJS.ProcessEnv {
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
export function plainEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
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

export interface PackedWorkspace extends Workspace {
  tarball: string;
  /** Paths inside the tarball, without the leading `package/`. */
  files: string[];
  manifest: {
    main?: string;
    types?: string;
    bin?: Record<string, string>;
    exports?: Record<string, string | Record<string, string>>;
    typesVersions?: Record<string, Record<string, string[]>>;
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
export function filesNamedBy(manifest: PackedWorkspace['manifest']): string[] {
  const named: string[] = [];
  const add = (target: unknown): void => {
    if (typeof target === 'string') named.push(target.replace(/^\.\//, ''));
    else if (target && typeof target === 'object') Object.values(target).forEach(add);
  };
  add(manifest.main);
  add(manifest.types);
  add(manifest.bin);
  add(manifest.exports);
  add(manifest.typesVersions);
  return [...new Set(named)];
}

export interface ScratchProject {
  /** The temporary directory holding the tarballs and the project. */
  root: string;
  /** The project: `npm init -y`, then the tarballs installed. */
  project: string;
  packed: PackedWorkspace[];
  remove(): void;
}

/** Packs every workspace (building first if needed) and installs the tarballs into a new project. */
export async function createScratchProject(): Promise<ScratchProject> {
  const root = mkdtempSync(path.join(tmpdir(), 'sqlgate-pack-'));
  const remove = () => rmSync(root, { recursive: true, force: true });
  try {
    if (!path.relative(REPO_ROOT, root).startsWith('..')) {
      throw new Error(`the scratch directory ${root} must be outside the repository ${REPO_ROOT}`);
    }
    await ensureBuilt();
    const packed: PackedWorkspace[] = [];
    for (const workspace of WORKSPACES) {
      const destination = path.join(root, 'tarballs', workspace.directory.replace(/\//g, '-'));
      packed.push(await pack(workspace, destination));
    }
    const project = path.join(root, 'project');
    mkdirSync(project);
    await runOk('npm', ['init', '-y'], { cwd: project, env: npmEnvironment(), timeoutMs: 60_000 });
    await runOk(
      'npm',
      ['install', ...packed.map(({ tarball }) => tarball), '--no-audit', '--no-fund'],
      { cwd: project, env: npmEnvironment(), timeoutMs: INSTALL_TIMEOUT_MS },
    );
    return { root, project, packed, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
