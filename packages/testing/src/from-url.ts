import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { buildConnectionString, messageOf, type TestDatabase } from './settings';
import { serverAcceptsSsl } from './ssl-probe';

/** The environment variable naming an existing database to test against. */
export const TEST_DATABASE_URL_VARIABLE = 'TEST_DATABASE_URL';

const DEFAULT_PORT = 5432;

interface ParsedDatabaseUrl {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** The `sslrootcert` parameter: a file holding the CA that signed the server certificate. */
  caFile: string | undefined;
}

/** Reads a `postgres://` URL with libpq's defaults: user = OS user, database = user, port 5432. */
export function parseDatabaseUrl(text: string): ParsedDatabaseUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(
      `${TEST_DATABASE_URL_VARIABLE} is not a URL (expected postgres://user:password@host:port/database)`,
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error(
      `${TEST_DATABASE_URL_VARIABLE} must start with postgres:// or postgresql://, not ${url.protocol}//`,
    );
  }
  // URL keeps the brackets of an IPv6 literal; sockets want the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') {
    throw new Error(
      `${TEST_DATABASE_URL_VARIABLE} must name a host (Unix sockets are not supported)`,
    );
  }
  const user = decodeURIComponent(url.username) || os.userInfo().username;
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || user;
  return {
    host,
    port: url.port ? Number(url.port) : DEFAULT_PORT,
    user,
    password: decodeURIComponent(url.password),
    database,
    caFile: url.searchParams.get('sslrootcert') ?? undefined,
  };
}

/**
 * Describes the database named by a URL. `tls` is found by asking the server (an SSLRequest,
 * which also proves it is reachable) rather than trusting `sslmode`. The connection string is
 * rebuilt without query parameters so that every client reads the same settings object.
 * stop() does nothing: the database belongs to whoever provided it.
 */
export async function testDatabaseFromUrl(text: string): Promise<TestDatabase> {
  const parsed = parseDatabaseUrl(text);
  let tls: boolean;
  try {
    tls = await serverAcceptsSsl(parsed.host, parsed.port);
  } catch (error) {
    throw new Error(`${TEST_DATABASE_URL_VARIABLE}: ${messageOf(error)}`);
  }
  let caCertificate: string | undefined;
  if (parsed.caFile !== undefined) {
    try {
      caCertificate = await readFile(parsed.caFile, 'utf8');
    } catch (error) {
      throw new Error(
        `${TEST_DATABASE_URL_VARIABLE}: cannot read sslrootcert: ${messageOf(error)}`,
      );
    }
  }
  const connection = {
    host: parsed.host,
    port: parsed.port,
    user: parsed.user,
    password: parsed.password,
    database: parsed.database,
  };
  const leaveAlone = async (): Promise<void> => undefined;
  return {
    ...connection,
    tls,
    ...(caCertificate !== undefined ? { caCertificate } : {}),
    connectionString: buildConnectionString(connection),
    source: 'env',
    stop: leaveAlone,
    [Symbol.asyncDispose]: leaveAlone,
  };
}
