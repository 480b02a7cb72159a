import { settingsOf, type TestDatabaseSettings } from './settings';

/** The environment variable through which a Jest global setup hands the database to test workers. */
export const TEST_DATABASE_SETTINGS_VARIABLE = 'SQLGATE_TEST_DATABASE';

const SOURCES: ReadonlySet<string> = new Set(['env', 'testcontainers', 'local-cluster']);

/**
 * Publishes a database's settings as JSON in `SQLGATE_TEST_DATABASE`, for a Jest global setup:
 * workers are started afterwards and inherit the variable.
 */
export function publishTestDatabase(
  database: TestDatabaseSettings,
  env: NodeJS.ProcessEnv = process.env,
): void {
  env[TEST_DATABASE_SETTINGS_VARIABLE] = JSON.stringify(settingsOf(database));
}

function isSettings(value: unknown): value is TestDatabaseSettings {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.host === 'string' &&
    typeof candidate.port === 'number' &&
    typeof candidate.user === 'string' &&
    typeof candidate.password === 'string' &&
    typeof candidate.database === 'string' &&
    typeof candidate.tls === 'boolean' &&
    typeof candidate.connectionString === 'string' &&
    typeof candidate.source === 'string' &&
    SOURCES.has(candidate.source) &&
    (candidate.caCertificate === undefined || typeof candidate.caCertificate === 'string')
  );
}

/**
 * The settings of the database the Jest global setup started for this run (see
 * {@link publishTestDatabase}). Throws an explanation when the setup did not run.
 */
export function testDatabaseFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
): TestDatabaseSettings {
  const published = env[TEST_DATABASE_SETTINGS_VARIABLE];
  if (published === undefined || published === '') {
    throw new Error(
      `${TEST_DATABASE_SETTINGS_VARIABLE} is not set: no test database was published for this run. ` +
        'Run the tests through Jest with a globalSetup that calls startTestDatabase() and publishTestDatabase() ' +
        "(in this repository: scripts/jest-global-setup.js, run by 'npm test' or 'npx jest').",
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(published);
  } catch {
    throw new Error(
      `${TEST_DATABASE_SETTINGS_VARIABLE} does not hold JSON: ${published.slice(0, 80)}`,
    );
  }
  if (!isSettings(parsed)) {
    throw new Error(`${TEST_DATABASE_SETTINGS_VARIABLE} does not hold test database settings`);
  }
  return parsed;
}
