// One Jest project per workspace. Tests import sibling packages from their sources, so a change
// in core is seen by the adapter's tests without a build step.
const path = require('node:path');

const sourceOf = (dir) => path.join(__dirname, dir, 'src');

const moduleNameMapper = {
  '^@sqlgate/core$': sourceOf('packages/core'),
  '^@sqlgate/testing$': sourceOf('packages/testing'),
  '^@sqlgate/testing/chromium$': path.join(sourceOf('packages/testing'), 'chromium'),
  '^@sqlgate/postgres-adapter$': sourceOf('packages/postgres-adapter'),
  '^@sqlgate/redis-cache$': sourceOf('packages/redis-cache'),
  '^@sqlgate/http-express$': sourceOf('apps/http-express'),
  '^@sqlgate/console$': sourceOf('packages/console'),
  '^@sqlgate/client$': sourceOf('packages/client'),
};

/**
 * Per test, unless it says otherwise. Jest's own 5 s is what a test against real servers can take
 * on a loaded machine; a test fails by its assertions, not by a clock (docs/decisions.md 10.45).
 */
const TEST_TIMEOUT_MS = 30_000;

const project = (dir, extra = {}) => ({
  displayName: path.basename(dir),
  rootDir: path.join(__dirname, dir),
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  ...extra,
  moduleNameMapper,
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, dir, 'tsconfig.json') }],
  },
});

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    project('packages/core'),
    project('packages/testing'),
    project('packages/postgres-adapter'),
    project('packages/redis-cache'),
    project('packages/console'),
    project('packages/client'),
    // Every HTTP test's response bodies pass one check: no internal message reaches a caller.
    project('apps/http-express', { setupFilesAfterEnv: ['<rootDir>/test/setup-after-env.ts'] }),
  ],
  testTimeout: TEST_TIMEOUT_MS,
  globalSetup: '<rootDir>/scripts/jest-global-setup.js',
  globalTeardown: '<rootDir>/scripts/jest-global-teardown.js',
};
