import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createSelfSignedCertificate, type SelfSignedCertificate } from './certificate';
import { cleanUpOnExit } from './exit-cleanup';
import { findFreePort } from './free-port';
import {
  findPostgresBinaries,
  postgresBinariesIn,
  type PostgresBinaries,
} from './postgres-binaries';
import { runCommand, runCommandSync, serverProcessOwner, type ProcessOwner } from './run-command';
import { buildConnectionString, messageOf, type TestDatabase } from './settings';

/** Options of {@link startLocalCluster}. */
export interface LocalClusterOptions {
  /** Offer TLS with a self-signed certificate made at start; default true. */
  tls?: boolean;
  /** Receives progress lines. */
  log?: (line: string) => void;
  /** Directory holding initdb, pg_ctl and postgres; found automatically when omitted. */
  binDirectory?: string;
  /**
   * More postgresql.conf settings, as name and value (quoted for you: postgresql.conf takes a
   * quoted number too), e.g. `{ shared_preload_libraries: 'pg_stat_statements' }`.
   */
  settings?: Record<string, string>;
  /**
   * Let the superuser connect for streaming replication over loopback (a replication line in
   * pg_hba.conf), so that {@link startLocalReplica} can copy and follow the cluster; default false.
   */
  replication?: boolean;
}

/** A throwaway PostgreSQL cluster run from the local server programs. */
export interface LocalCluster extends TestDatabase {
  source: 'local-cluster';
  restart: () => Promise<void>;
  /** Temporary directory holding the data directory, certificate, socket and log; deleted by stop(). */
  directory: string;
  dataDirectory: string;
  /** The server log, useful when a test needs to know why the server misbehaved. */
  logFile: string;
}

const SUPERUSER = 'sqlgate_test';
const DATABASE = 'sqlgate';
const HOST = '127.0.0.1';
/** A port found free can be taken before the server binds it; a few retries cover that race. */
const START_ATTEMPTS = 3;

/** Single-quoted postgresql.conf value. */
const confString = (value: string) => `'${value.replace(/'/g, "''")}'`;

interface ClusterLayout {
  directory: string;
  dataDirectory: string;
  logFile: string;
  binaries: PostgresBinaries;
  owner: ProcessOwner | undefined;
  /** LocalClusterOptions.settings. */
  settings: Record<string, string>;
  /** LocalClusterOptions.replication. */
  replication: boolean;
}

async function initialiseDataDirectory(layout: ClusterLayout, password: string): Promise<void> {
  const passwordFile = path.join(layout.directory, 'superuser-password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (layout.owner) await chown(passwordFile, layout.owner.uid, layout.owner.gid);
  try {
    await runCommand(
      layout.binaries.initdb,
      [
        `--pgdata=${layout.dataDirectory}`,
        `--username=${SUPERUSER}`,
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
        // Durability is pointless for a cluster deleted after the run, and syncing costs seconds.
        '--no-sync',
      ],
      { cwd: layout.directory, owner: layout.owner },
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** Our settings live in their own file so that a port change rewrites one small file. */
async function writeSettings(
  layout: ClusterLayout,
  port: number,
  certificate: SelfSignedCertificate | undefined,
): Promise<void> {
  const lines = [
    `listen_addresses = ${confString(HOST)}`,
    `port = ${port}`,
    `unix_socket_directories = ${confString(layout.directory)}`,
    // Test suites open many pools at once.
    'max_connections = 200',
    'shared_buffers = 32MB',
    'fsync = off',
    'synchronous_commit = off',
    'full_page_writes = off',
    "password_encryption = 'scram-sha-256'",
    `ssl = ${certificate ? 'on' : 'off'}`,
    ...(certificate
      ? [
          `ssl_cert_file = ${confString(certificate.certificateFile)}`,
          `ssl_key_file = ${confString(certificate.keyFile)}`,
        ]
      : []),
    ...Object.entries(layout.settings).map(([name, value]) => `${name} = ${confString(value)}`),
  ];
  const settingsFile = path.join(layout.dataDirectory, 'sqlgate.conf');
  await writeFile(settingsFile, `${lines.join('\n')}\n`);
  if (layout.owner) await chown(settingsFile, layout.owner.uid, layout.owner.gid);
}

/** Password authentication everywhere, no trust: tests must be able to see a wrong password refused. */
async function writeAccessRules(layout: ClusterLayout): Promise<void> {
  const rules = [
    'local all all scram-sha-256',
    'host all all 127.0.0.1/32 scram-sha-256',
    'host all all ::1/128 scram-sha-256',
    ...(layout.replication ? ['host replication all 127.0.0.1/32 scram-sha-256'] : []),
  ];
  await writeFile(path.join(layout.dataDirectory, 'pg_hba.conf'), `${rules.join('\n')}\n`);
  const mainConfig = path.join(layout.dataDirectory, 'postgresql.conf');
  const original = await readFile(mainConfig, 'utf8');
  await writeFile(mainConfig, `${original}\ninclude = 'sqlgate.conf'\n`);
}

function pgCtl(layout: ClusterLayout, args: readonly string[]) {
  return runCommand(layout.binaries.pgCtl, ['--pgdata', layout.dataDirectory, ...args], {
    cwd: layout.directory,
    owner: layout.owner,
  });
}

async function logTail(layout: ClusterLayout): Promise<string> {
  try {
    return (await readFile(layout.logFile, 'utf8')).trim().split('\n').slice(-10).join('\n');
  } catch {
    return '';
  }
}

async function startServer(layout: ClusterLayout): Promise<void> {
  try {
    await pgCtl(layout, ['start', '--wait', '--timeout=60', '--silent', '--log', layout.logFile]);
  } catch (error) {
    const tail = await logTail(layout);
    throw new Error(`${messageOf(error)}${tail ? `\nserver log:\n${tail}` : ''}`);
  }
}

async function startOnFreePort(
  layout: ClusterLayout,
  certificate: SelfSignedCertificate | undefined,
): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await findFreePort(HOST);
    await writeSettings(layout, port, certificate);
    try {
      await startServer(layout);
      return port;
    } catch (error) {
      const portTaken = /could not bind|address already in use/i.test(messageOf(error));
      if (!portTaken || attempt >= START_ATTEMPTS) throw error;
    }
  }
}

async function createDatabase(port: number, password: string): Promise<void> {
  const client = new Client({
    host: HOST,
    port,
    user: SUPERUSER,
    password,
    database: 'postgres',
    ssl: false,
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

function stopServerSync(layout: ClusterLayout): void {
  runCommandSync(
    layout.binaries.pgCtl,
    ['--pgdata', layout.dataDirectory, 'stop', '--mode=immediate', '--wait', '--silent'],
    { cwd: layout.directory, owner: layout.owner, timeoutMs: 15_000 },
  );
}

/**
 * Starts a throwaway PostgreSQL cluster from the local server programs: a fresh data directory
 * in a temporary directory, a free loopback port, scram-sha-256 password authentication only,
 * a random superuser password, and TLS with a self-signed certificate unless `tls: false`.
 * Durability is switched off for speed. The database `sqlgate` is created; tests may create more.
 */
export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const tls = options.tls ?? true;
  const log = options.log ?? (() => undefined);
  const binaries = options.binDirectory
    ? await postgresBinariesIn(options.binDirectory)
    : await findPostgresBinaries();
  const owner = await serverProcessOwner();
  const directory = await mkdtemp(path.join(os.tmpdir(), 'sqlgate-pg-'));
  const layout: ClusterLayout = {
    directory,
    dataDirectory: path.join(directory, 'data'),
    logFile: path.join(directory, 'server.log'),
    binaries,
    owner,
    settings: options.settings ?? {},
    replication: options.replication ?? false,
  };
  let forgetExitCleanUp = (): void => undefined;
  try {
    // The server account must be able to create the data directory, socket and log in here.
    if (owner) await chown(directory, owner.uid, owner.gid);
    log(`local cluster: initialising ${layout.dataDirectory} with ${binaries.directory}`);
    const password = randomBytes(24).toString('base64url');
    const [certificate] = await Promise.all([
      tls ? createSelfSignedCertificate({ directory, owner }) : Promise.resolve(undefined),
      initialiseDataDirectory(layout, password),
    ]);
    await writeAccessRules(layout);
    forgetExitCleanUp = cleanUpOnExit(() => {
      if (existsSync(path.join(layout.dataDirectory, 'postmaster.pid'))) stopServerSync(layout);
      rmSync(directory, { recursive: true, force: true });
    });
    const port = await startOnFreePort(layout, certificate);
    await createDatabase(port, password);
    log(`local cluster: listening on ${HOST}:${port}${tls ? ' with TLS' : ''}`);
    return clusterHandle(layout, { port, password, certificate }, forgetExitCleanUp);
  } catch (error) {
    forgetExitCleanUp();
    await stopAndDelete(layout).catch(() => undefined);
    throw error;
  }
}

async function stopAndDelete(layout: ClusterLayout): Promise<void> {
  if (existsSync(path.join(layout.dataDirectory, 'postmaster.pid'))) {
    try {
      await pgCtl(layout, ['stop', '--mode=immediate', '--wait', '--silent']);
    } catch (error) {
      // Deleting the files of a server that is still running would leave it orphaned.
      if (existsSync(path.join(layout.dataDirectory, 'postmaster.pid'))) throw error;
    }
  }
  await rm(layout.directory, { recursive: true, force: true });
}

function clusterHandle(
  layout: ClusterLayout,
  server: { port: number; password: string; certificate: SelfSignedCertificate | undefined },
  forgetExitCleanUp: () => void,
): LocalCluster {
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= stopAndDelete(layout).then(forgetExitCleanUp));
  const restart = async (): Promise<void> => {
    if (stopping) throw new Error('the local cluster was stopped; it cannot be restarted');
    // A server that died on its own is simply started again.
    if (existsSync(path.join(layout.dataDirectory, 'postmaster.pid'))) {
      await pgCtl(layout, ['stop', '--mode=fast', '--wait', '--silent']);
    }
    await startServer(layout);
  };
  const connection = {
    host: HOST,
    port: server.port,
    user: SUPERUSER,
    password: server.password,
    database: DATABASE,
  };
  return {
    ...connection,
    tls: server.certificate !== undefined,
    ...(server.certificate ? { caCertificate: server.certificate.certificatePem } : {}),
    connectionString: buildConnectionString(connection),
    source: 'local-cluster',
    directory: layout.directory,
    dataDirectory: layout.dataDirectory,
    logFile: layout.logFile,
    stop,
    restart,
    [Symbol.asyncDispose]: stop,
  };
}
