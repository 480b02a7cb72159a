import { existsSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { eventually } from './eventually';
import { cleanUpOnExit } from './exit-cleanup';
import { findFreePort } from './free-port';
import type { LocalCluster } from './local-cluster';
import { findPostgresBinaries } from './postgres-binaries';
import { runCommand, runCommandSync, serverProcessOwner } from './run-command';
import { buildConnectionString, messageOf } from './settings';

/** A streaming hot standby of a {@link LocalCluster}, on its own port and data directory. */
export interface LocalReplica {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  connectionString: string;
  directory: string;
  dataDirectory: string;
  logFile: string;
  /** Stops applying the WAL it receives (`pg_wal_replay_pause()`): it stays queryable, and lags. */
  pauseReplay(): Promise<void>;
  /** Applies the WAL again (`pg_wal_replay_resume()`). */
  resumeReplay(): Promise<void>;
  /** Stops the server at once (its data kept): it can be started again. */
  stop(): Promise<void>;
  /** Starts it again on the same port, and waits until it streams from the primary once more. */
  start(): Promise<void>;
  /** Stops it and deletes its files (idempotent). */
  remove(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface LocalReplicaOptions {
  log?: (line: string) => void;
}

const HOST = '127.0.0.1';
/** How long a fresh or restarted standby may take to connect to its primary and stream. */
const STREAMING_WITHIN_MS = 60_000;

interface StandbyPlace {
  binaries: Awaited<ReturnType<typeof findPostgresBinaries>>;
  directory: string;
  dataDirectory: string;
  owner: Awaited<ReturnType<typeof serverProcessOwner>>;
}

/**
 * `pg_basebackup -R` of `primary` into `dataDirectory`, its settings made a hot standby's on a
 * free port of its own; the port.
 */
async function copyAsStandby(
  primary: LocalCluster,
  { binaries, directory, dataDirectory, owner }: StandbyPlace,
): Promise<number> {
  const source = `host=${HOST} port=${primary.port} user=${primary.user} password=${primary.password} sslmode=disable`;
  await runCommand(
    path.join(binaries.directory, 'pg_basebackup'),
    [
      `--pgdata=${dataDirectory}`,
      `--dbname=${source}`,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ],
    { cwd: directory, owner },
  );
  const port = await findFreePort(HOST);
  // The copy holds the primary's own settings file: its port and socket directory are replaced.
  const settingsFile = path.join(dataDirectory, 'sqlgate.conf');
  const settings = (await readFile(settingsFile, 'utf8'))
    .split('\n')
    .filter((line) => !/^(port|unix_socket_directories|hot_standby) =/.test(line));
  settings.push(`port = ${port}`, `unix_socket_directories = '${directory}'`, 'hot_standby = on');
  await writeFile(settingsFile, `${settings.join('\n')}\n`);
  if (owner) await chown(settingsFile, owner.uid, owner.gid);
  return port;
}

/**
 * Copies `primary` with `pg_basebackup -R` (the primary must be started with `replication: true`)
 * into a new data directory, starts it as a hot standby on a free port, and waits until it is in
 * recovery and streaming from the primary.
 */
export async function startLocalReplica(
  primary: LocalCluster,
  options: LocalReplicaOptions = {},
): Promise<LocalReplica> {
  const log = options.log ?? (() => undefined);
  const binaries = await findPostgresBinaries();
  const owner = await serverProcessOwner();
  const directory = await mkdtemp(path.join(os.tmpdir(), 'sqlgate-replica-'));
  const dataDirectory = path.join(directory, 'data');
  const logFile = path.join(directory, 'server.log');
  const pgCtl = (args: readonly string[]) =>
    runCommand(binaries.pgCtl, ['--pgdata', dataDirectory, ...args], { cwd: directory, owner });
  const running = () => existsSync(path.join(dataDirectory, 'postmaster.pid'));
  const forgetExitCleanUp = cleanUpOnExit(() => {
    if (running()) {
      runCommandSync(binaries.pgCtl, ['--pgdata', dataDirectory, 'stop', '--mode=immediate'], {
        cwd: directory,
        owner,
        timeoutMs: 15_000,
      });
    }
    rmSync(directory, { recursive: true, force: true });
  });
  let port = 0;
  const connection = () => ({
    host: HOST,
    port,
    user: primary.user,
    password: primary.password,
    database: primary.database,
  });
  const query = async (sql: string): Promise<unknown[]> => {
    const client = new Client({ ...connection(), ssl: false, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      return (await client.query({ text: sql, rowMode: 'array' })).rows;
    } finally {
      await client.end();
    }
  };
  const untilStreaming = () =>
    eventually(
      async () => {
        const [row] = (await query(
          "SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming')",
        )) as [[boolean, string]];
        return row[0] && row[1] === '1';
      },
      { withinMs: STREAMING_WITHIN_MS, everyMs: 100 },
    );
  const startServer = async () => {
    try {
      await pgCtl(['start', '--wait', '--timeout=60', '--silent', '--log', logFile]);
    } catch (error) {
      const tail = await readFile(logFile, 'utf8').catch(() => '');
      throw new Error(
        `${messageOf(error)}\nserver log:\n${tail.trim().split('\n').slice(-10).join('\n')}`,
      );
    }
    await untilStreaming();
  };
  const remove = async () => {
    if (running()) await pgCtl(['stop', '--mode=immediate', '--wait', '--silent']);
    await rm(directory, { recursive: true, force: true });
    forgetExitCleanUp();
  };
  try {
    if (owner) await chown(directory, owner.uid, owner.gid);
    log(`local replica: copying ${primary.host}:${primary.port} into ${dataDirectory}`);
    port = await copyAsStandby(primary, { binaries, directory, dataDirectory, owner });
    await startServer();
    log(`local replica: streaming on ${HOST}:${port}`);
  } catch (error) {
    await remove().catch(() => undefined);
    throw error;
  }
  return {
    ...connection(),
    connectionString: buildConnectionString(connection()),
    directory,
    dataDirectory,
    logFile,
    pauseReplay: async () => {
      await query('SELECT pg_wal_replay_pause()');
    },
    resumeReplay: async () => {
      await query('SELECT pg_wal_replay_resume()');
    },
    stop: async () => {
      if (running()) await pgCtl(['stop', '--mode=immediate', '--wait', '--silent']);
    },
    start: startServer,
    remove,
    [Symbol.asyncDispose]: remove,
  };
}
