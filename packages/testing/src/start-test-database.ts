import { startPostgresContainer } from './containers';
import { TEST_DATABASE_URL_VARIABLE, testDatabaseFromUrl } from './from-url';
import { startLocalCluster } from './local-cluster';
import { messageOf, type StartTestDatabaseOptions, type TestDatabase } from './settings';

/** Why each way of finding a test database was passed over. */
export interface TestDatabaseAttempts {
  env: string;
  testcontainers: string;
  localCluster: string;
}

/** Thrown by {@link startTestDatabase} when no way of finding a database worked. */
export class NoTestDatabaseError extends Error {
  constructor(readonly attempts: TestDatabaseAttempts) {
    super(
      [
        'No PostgreSQL for tests: every way of finding one failed.',
        `  1. ${TEST_DATABASE_URL_VARIABLE}: ${attempts.env}`,
        `  2. testcontainers: ${attempts.testcontainers}`,
        `  3. local cluster: ${attempts.localCluster}`,
        `Set ${TEST_DATABASE_URL_VARIABLE}, start a Docker engine, or install the PostgreSQL server programs (initdb, pg_ctl).`,
      ].join('\n'),
    );
    this.name = 'NoTestDatabaseError';
  }
}

/**
 * Provides a real PostgreSQL for tests, trying in order:
 * 1. `TEST_DATABASE_URL`, when set: that database is used as is and never stopped. A URL that is
 *    set but unusable fails here rather than being silently replaced by another database.
 * 2. A testcontainers PostgreSQL container, when a container engine answers within seconds.
 * 3. A throwaway cluster from the local PostgreSQL server programs ({@link startLocalCluster}).
 * Fails with a {@link NoTestDatabaseError} that says why each way failed.
 */
export async function startTestDatabase(
  options: StartTestDatabaseOptions = {},
): Promise<TestDatabase> {
  const log = options.log ?? (() => undefined);
  const tls = options.tls ?? true;

  const url = process.env[TEST_DATABASE_URL_VARIABLE];
  if (url !== undefined && url.trim() !== '') {
    log(`using ${TEST_DATABASE_URL_VARIABLE}`);
    return testDatabaseFromUrl(url.trim());
  }
  const env = 'not set';

  let testcontainers: string;
  try {
    return await startPostgresContainer({ tls, log });
  } catch (error) {
    testcontainers = messageOf(error);
    log(`testcontainers passed over: ${testcontainers}`);
  }

  let localCluster: string;
  try {
    return await startLocalCluster({ tls, log });
  } catch (error) {
    localCluster = messageOf(error);
    log(`local cluster failed: ${localCluster}`);
  }

  throw new NoTestDatabaseError({ env, testcontainers, localCluster });
}
