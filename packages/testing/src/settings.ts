/** How a test database was found. */
export type TestDatabaseSource = 'env' | 'testcontainers' | 'local-cluster';

/** Everything a client needs to reach a test database; plain data, safe to serialise as JSON. */
export interface TestDatabaseSettings {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** The server offers TLS. */
  tls: boolean;
  /** PEM of the CA that signed the server certificate (the self-signed cert itself), when known. */
  caCertificate?: string;
  /** postgres://user:password@host:port/database */
  connectionString: string;
  /** How it was found. */
  source: TestDatabaseSource;
}

/** A running test database and the means to get rid of it. */
export interface TestDatabase extends TestDatabaseSettings {
  /** Stops and deletes what startTestDatabase started (idempotent); a database from TEST_DATABASE_URL is left alone. */
  stop(): Promise<void>;
  /** Restart the server (same port, same data) — only for local clusters; undefined otherwise. */
  restart?: () => Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@link startTestDatabase}. */
export interface StartTestDatabaseOptions {
  /** Whether a database started for the run offers TLS; default true. A database from TEST_DATABASE_URL is taken as it is. */
  tls?: boolean;
  /** Receives progress lines (which way is tried, why one was passed over). */
  log?: (line: string) => void;
}

/** Builds `postgres://user:password@host:port/database`, escaping every part. */
export function buildConnectionString(
  settings: Pick<TestDatabaseSettings, 'host' | 'port' | 'user' | 'password' | 'database'>,
): string {
  // An IPv6 literal must be bracketed or its colons would be read as the port separator.
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const user = encodeURIComponent(settings.user);
  const password = encodeURIComponent(settings.password);
  const database = encodeURIComponent(settings.database);
  return `postgres://${user}:${password}@${host}:${settings.port}/${database}`;
}

/** The serialisable part of a test database, without its methods or source-specific extras. */
export function settingsOf(database: TestDatabaseSettings): TestDatabaseSettings {
  const settings: TestDatabaseSettings = {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    tls: database.tls,
    connectionString: database.connectionString,
    source: database.source,
  };
  if (database.caCertificate !== undefined) settings.caCertificate = database.caCertificate;
  return settings;
}

/** Turns an unknown thrown value into a one-line message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
