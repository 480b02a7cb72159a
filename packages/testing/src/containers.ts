import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSelfSignedCertificate } from './certificate';
import { buildConnectionString, messageOf, type TestDatabase } from './settings';

type TestcontainersModule = typeof import('testcontainers');
type PostgresModule = typeof import('@testcontainers/postgresql');

/** Image used unless TEST_DATABASE_IMAGE names another. */
export const DEFAULT_POSTGRES_IMAGE = 'postgres:17-alpine';

/** How long a container engine may take to answer before it is considered absent. */
const RUNTIME_TIMEOUT_MS = 5_000;
const SUPERUSER = 'sqlgate_test';
const DATABASE = 'sqlgate';

/** Options of {@link startPostgresContainer}. */
export interface PostgresContainerOptions {
  tls: boolean;
  log: (line: string) => void;
}

/**
 * Loads the testcontainers modules on first use only: they are heavy, and they fail to load on
 * Node versions older than they support, which must not break the other ways of finding a database.
 */
function loadModules(): { testcontainers: TestcontainersModule; postgres: PostgresModule } {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    return {
      testcontainers: require('testcontainers') as TestcontainersModule,
      postgres: require('@testcontainers/postgresql') as PostgresModule,
    };
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch (error) {
    const required = requiredNodeVersion();
    throw new Error(
      `the testcontainers package cannot be loaded on Node ${process.version}` +
        `${required ? ` (it requires Node ${required})` : ''}: ${messageOf(error).split('\n')[0]}`,
    );
  }
}

/** The Node range testcontainers declares, which explains most load failures. */
function requiredNodeVersion(): string | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const manifest = require('testcontainers/package.json') as { engines?: { node?: string } };
    return manifest.engines?.node;
  } catch {
    return undefined;
  }
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
    // A missing engine must not keep the process alive.
    timer.unref();
  });
  // The losing promise may reject later; that is expected and must not surface as unhandled.
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Starts PostgreSQL in a container through testcontainers when a container engine answers
 * within a few seconds. TLS uses a self-signed certificate valid for localhost, 127.0.0.1 and
 * the engine's host. The container is removed by stop() (and by testcontainers' reaper should
 * the process die).
 */
export async function startPostgresContainer(
  options: PostgresContainerOptions,
): Promise<TestDatabase> {
  const { testcontainers, postgres } = loadModules();
  const runtime = await withTimeout(
    testcontainers.getContainerRuntimeClient(),
    RUNTIME_TIMEOUT_MS,
    `no container engine answered within ${RUNTIME_TIMEOUT_MS / 1000} s`,
  ).catch((error: unknown) => {
    throw new Error(`no container engine available: ${messageOf(error)}`);
  });
  const image = process.env.TEST_DATABASE_IMAGE || DEFAULT_POSTGRES_IMAGE;
  options.log(`testcontainers: starting ${image} on ${runtime.info.containerRuntime.host}`);

  const certificateDirectory = options.tls
    ? await mkdtemp(path.join(os.tmpdir(), 'sqlgate-pg-tls-'))
    : undefined;
  const removeCertificate = async () => {
    if (certificateDirectory) await rm(certificateDirectory, { recursive: true, force: true });
  };
  try {
    const password = randomBytes(24).toString('base64url');
    const container = new postgres.PostgreSqlContainer(image)
      .withDatabase(DATABASE)
      .withUsername(SUPERUSER)
      .withPassword(password)
      .withCommand([
        'postgres',
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
        ...['-c', 'max_connections=200'],
      ]);
    const certificate = certificateDirectory
      ? await createSelfSignedCertificate({
          directory: certificateDirectory,
          hostnames: [runtime.info.containerRuntime.host],
        })
      : undefined;
    if (certificate) {
      // testcontainers 11 has no withSSL. PostgreSQL refuses a key its user does not own, and copied
      // files belong to root: the entrypoint installs the key for postgres, then starts as usual.
      container
        .withCopyFilesToContainer([
          { source: certificate.certificateFile, target: '/tmp/sqlgate-server.crt', mode: 0o644 },
          { source: certificate.keyFile, target: '/tmp/sqlgate-server.key.in', mode: 0o600 },
        ])
        .withEntrypoint([
          'sh',
          '-c',
          'install -o postgres -m 600 /tmp/sqlgate-server.key.in /tmp/sqlgate-server.key && exec docker-entrypoint.sh "$@"',
          'sh',
        ])
        .withCommand([
          'postgres',
          ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
          ...['-c', 'max_connections=200'],
          ...['-c', 'ssl=on', '-c', 'ssl_cert_file=/tmp/sqlgate-server.crt'],
          ...['-c', 'ssl_key_file=/tmp/sqlgate-server.key'],
        ]);
    }
    const started = await container.start();

    const connection = {
      host: started.getHost(),
      port: started.getPort(),
      user: SUPERUSER,
      password,
      database: DATABASE,
    };
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => (stopping ??= started.stop().then(removeCertificate));
    return {
      ...connection,
      tls: certificate !== undefined,
      ...(certificate ? { caCertificate: certificate.certificatePem } : {}),
      connectionString: buildConnectionString(connection),
      source: 'testcontainers',
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await removeCertificate();
    throw error;
  }
}
