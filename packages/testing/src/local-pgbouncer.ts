/**
 * A throwaway PgBouncer for tests: `pgbouncer` from PATH on a free port of 127.0.0.1, in front of
 * a PostgreSQL the caller names, with its configuration, log and pid file in a temporary directory
 * of its own.
 *
 * PgBouncer lets every client in without a password (`auth_type = any`, loopback only) and logs in
 * to the server as the one user and password of the database line, so any client user name and
 * password reach the same server pool: two callers with their own credentials share backends, as
 * they do behind a pooler configured with a forced user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { untilServing } from './until-serving';
import { rmSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cleanUpOnExit } from './exit-cleanup';
import { findFreePort } from './free-port';
import { serverProcessOwner } from './run-command';

/** How PgBouncer hands server connections to clients (its `pool_mode`). */
export type PgBouncerPoolMode = 'session' | 'transaction' | 'statement';

export interface LocalPgBouncerOptions {
  /** The PostgreSQL behind it, and the user and password PgBouncer logs in with. */
  server: { host: string; port: number; user: string; password: string; database: string };
  /** Default `transaction`. */
  poolMode?: PgBouncerPoolMode;
  /** Server connections per database and user (`default_pool_size`); default 2. */
  poolSize?: number;
  /** More `[pgbouncer]` settings, by name, e.g. `{ server_round_robin: '1' }`. */
  settings?: Record<string, string>;
  /**
   * The port to listen on, e.g. that of a PgBouncer stopped before, to bring a pooler back at the
   * address its clients know; a free one when omitted.
   */
  port?: number;
  /** The pgbouncer program; `pgbouncer` from PATH when omitted. */
  binary?: string;
  /** Receives progress lines. */
  log?: (line: string) => void;
}

export interface LocalPgBouncer {
  host: string;
  port: number;
  /** The database name clients connect to: the server's own. */
  database: string;
  poolMode: PgBouncerPoolMode;
  /** Holds pgbouncer.ini and the log; deleted by stop(). */
  directory: string;
  logFile: string;
  /** Stops PgBouncer and removes its directory. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const HOST = '127.0.0.1';
/** A port found free can be taken before PgBouncer binds it; a few retries cover that race. */
const START_ATTEMPTS = 3;
const STOP_GRACE_MS = 2000;

/**
 * Starts a PgBouncer that only this test run uses.
 *
 * @example
 * await using bouncer = await startLocalPgBouncer({ server: cluster, poolMode: 'transaction' });
 * // ... connect to bouncer.host:bouncer.port, database bouncer.database, any user ...
 */
export async function startLocalPgBouncer(options: LocalPgBouncerOptions): Promise<LocalPgBouncer> {
  const binary = options.binary ?? 'pgbouncer';
  const log = options.log ?? (() => undefined);
  const poolMode = options.poolMode ?? 'transaction';
  // PgBouncer refuses to run as root: under root it runs as the account PostgreSQL runs as.
  const owner = await serverProcessOwner();
  const directory = await mkdtemp(path.join(os.tmpdir(), 'sqlgate-pgbouncer-'));
  const logFile = path.join(directory, 'pgbouncer.log');
  let child: ChildProcess | undefined;
  const forget = cleanUpOnExit(() => {
    child?.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  });

  let port = 0;
  try {
    if (owner) await chown(directory, owner.uid, owner.gid);
    for (let attempt = 1; ; attempt++) {
      port = options.port ?? (await findFreePort(HOST));
      const configFile = path.join(directory, 'pgbouncer.ini');
      await writeFile(configFile, configuration(options, poolMode, port, directory, logFile), {
        mode: 0o600,
      });
      if (owner) await chown(configFile, owner.uid, owner.gid);
      const args = owner ? ['-u', owner.name, configFile] : [configFile];
      child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        await untilServing(child, () => accepts(port), {
          name: 'pgbouncer',
          notReady: 'pgbouncer did not listen',
        });
        break;
      } catch (error) {
        child.kill('SIGKILL');
        if (attempt >= START_ATTEMPTS) throw error;
        log(`pgbouncer did not start on port ${port} (${(error as Error).message}); retrying`);
      }
    }
  } catch (error) {
    forget();
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  log(`pgbouncer (${poolMode} pooling) ready on ${HOST}:${port}`);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      const running = child;
      child = undefined;
      if (running && running.exitCode === null && running.signalCode === null) {
        const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
        // SIGINT: PgBouncer closes its connections at once (SIGTERM would wait for clients).
        running.kill('SIGINT');
        const forced = setTimeout(() => running.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(forced);
      }
      forget();
      await rm(directory, { recursive: true, force: true });
    })());
  return {
    host: HOST,
    port,
    database: options.server.database,
    poolMode,
    directory,
    logFile,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** pgbouncer.ini: one database, every client let in, one forced server user. */
function configuration(
  options: LocalPgBouncerOptions,
  poolMode: PgBouncerPoolMode,
  port: number,
  directory: string,
  logFile: string,
): string {
  const { server } = options;
  const connection = [
    `host=${server.host}`,
    `port=${server.port}`,
    `dbname=${quoted(server.database)}`,
    `user=${quoted(server.user)}`,
    `password=${quoted(server.password)}`,
  ].join(' ');
  const settings: Record<string, string> = {
    listen_addr: HOST,
    listen_port: String(port),
    // No Unix socket: tests reach it over TCP only.
    unix_socket_dir: '',
    auth_type: 'any',
    pool_mode: poolMode,
    default_pool_size: String(options.poolSize ?? 2),
    max_client_conn: '500',
    logfile: logFile,
    pidfile: path.join(directory, 'pgbouncer.pid'),
    // Sent by some drivers; PgBouncer refuses startup parameters it does not know.
    ignore_startup_parameters: 'extra_float_digits',
    ...options.settings,
  };
  return [
    '[databases]',
    `${server.database} = ${connection}`,
    '',
    '[pgbouncer]',
    ...Object.entries(settings).map(([name, value]) => `${name} = ${value}`),
    '',
  ].join('\n');
}

/** A value of a [databases] line, quoted as libpq connection strings quote. */
function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** True when something accepts a TCP connection on `port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}
