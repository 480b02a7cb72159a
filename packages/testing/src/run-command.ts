import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';

/** An OS account that commands run as, when it differs from the current one. */
export interface ProcessOwner {
  name: string;
  uid: number;
  gid: number;
}

/** Options shared by {@link runCommand} and {@link runCommandSync}. */
export interface RunCommandOptions {
  cwd?: string;
  /** Run as this account (needs root); the current account otherwise. */
  owner?: ProcessOwner;
  timeoutMs?: number;
}

/** What a finished command printed. */
export interface CommandOutput {
  stdout: string;
  stderr: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The environment without libpq/server variables: PGOPTIONS, PGPORT, PGDATA and friends from the
 * developer's shell would silently change how the throwaway cluster is created or started.
 */
function cleanEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('PG')) env[name] = value;
  }
  return env;
}

function spawnOptions(options: RunCommandOptions) {
  return {
    cwd: options.cwd,
    env: cleanEnvironment(),
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    encoding: 'utf8' as const,
    maxBuffer: 16 * 1024 * 1024,
    ...(options.owner ? { uid: options.owner.uid, gid: options.owner.gid } : {}),
  };
}

function describeFailure(
  file: string,
  args: readonly string[],
  error: unknown,
  stderr: string,
): Error {
  const command = [path.basename(file), ...args].join(' ');
  const detail = stderr.trim().split('\n').slice(-15).join('\n');
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new Error(`${command} failed: ${detail || reason}`);
}

/** Runs a program to completion; rejects with its stderr when it fails. */
export function runCommand(
  file: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    execFile(file, args, spawnOptions(options), (error, stdout, stderr) => {
      if (error) reject(describeFailure(file, args, error, stderr));
      else resolve({ stdout, stderr });
    });
  });
}

/** Synchronous {@link runCommand}, for process 'exit' handlers where nothing asynchronous runs. */
export function runCommandSync(
  file: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): string {
  try {
    return execFileSync(file, args, {
      ...spawnOptions(options),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    throw describeFailure(file, args, error, typeof stderr === 'string' ? stderr : '');
  }
}

/**
 * The account a PostgreSQL server must run as: initdb and postgres refuse to run as root, so
 * under root that is the `postgres` account; otherwise the current account (undefined).
 */
export async function serverProcessOwner(): Promise<ProcessOwner | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const name = 'postgres';
  try {
    const [uid, gid] = await Promise.all([
      runCommand('id', ['-u', name]),
      runCommand('id', ['-g', name]),
    ]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    throw new Error(
      `running as root, and PostgreSQL refuses to run as root; no '${name}' OS account was found to run it as`,
    );
  }
}
