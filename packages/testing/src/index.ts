/**
 * A real PostgreSQL for tests: an existing one from TEST_DATABASE_URL, a testcontainers
 * container, or a throwaway local cluster with password authentication and TLS.
 */
export type {
  StartTestDatabaseOptions,
  TestDatabase,
  TestDatabaseSettings,
  TestDatabaseSource,
} from './settings';
export {
  startTestDatabase,
  NoTestDatabaseError,
  type TestDatabaseAttempts,
} from './start-test-database';
export { startLocalCluster, type LocalCluster, type LocalClusterOptions } from './local-cluster';
export {
  publishTestDatabase,
  testDatabaseFromEnvironment,
  TEST_DATABASE_SETTINGS_VARIABLE,
} from './environment';
export { TEST_DATABASE_URL_VARIABLE } from './from-url';
