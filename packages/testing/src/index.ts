/**
 * A real PostgreSQL for tests: an existing one from TEST_DATABASE_URL, a testcontainers
 * container, or a throwaway local cluster with password authentication and TLS (or without TLS).
 * Also a fake PostgreSQL server that answers with seeded protocol faults, for fault tests, and a
 * throwaway Redis server. The headless Chromium has an entry point of its own,
 * `@sqlgate/testing/chromium`: its types need playwright-core, an optional peer dependency that
 * this entry point must compile without (docs/decisions.md 10.46).
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
export { startLocalReplica, type LocalReplica, type LocalReplicaOptions } from './local-replica';
export { startLocalRedis, type LocalRedis, type LocalRedisOptions } from './local-redis';
export {
  startLocalPgBouncer,
  type LocalPgBouncer,
  type LocalPgBouncerOptions,
  type PgBouncerPoolMode,
} from './local-pgbouncer';
export {
  publishTestDatabase,
  testDatabaseFromEnvironment,
  TEST_DATABASE_SETTINGS_VARIABLE,
} from './environment';
export { TEST_DATABASE_URL_VARIABLE } from './from-url';
export { eventually, EVENTUALLY_WITHIN_MS, type EventuallyOptions } from './eventually';
export { findFreePort } from './free-port';
export { untilServing } from './until-serving';
export {
  startFakePostgres,
  mutatingBehaviour,
  wellFormed,
  type Behaviour,
  type FakePostgres,
  type FakePostgresOptions,
  type Login,
  type LoginBehaviour,
  type MutatingBehaviourOptions,
  type RoundTrip,
} from './fake-postgres';
export {
  MUTATIONS,
  EVEN_WEIGHTS,
  chooseMutation,
  createRandom,
  mulberry32,
  mutateAnswer,
  replyWith,
  seedFrom,
  type AfterReply,
  type MutationName,
  type MutationWeights,
  type Random,
  type Reply,
} from './fake-postgres-mutations';
export {
  backend,
  encode,
  frame,
  frameWithLength,
  loginAnswer,
  serverError,
  fakeStatementOutcome,
  FakeSession,
  FrontendReader,
  type BackendMessage,
  type FakeColumn,
  type FrontendMessage,
} from './fake-postgres-protocol';
