// Starts one PostgreSQL for the whole Jest run and publishes its settings to the test workers
// through the SQLGATE_TEST_DATABASE environment variable (workers are started afterwards and
// inherit it). The built package is used because Jest loads this file without transforming
// TypeScript; `npm test` builds before running Jest.
const fs = require('node:fs');
const path = require('node:path');

const builtPackage = path.join(__dirname, '..', 'packages', 'testing', 'dist', 'index.js');

/** Where jest-global-teardown.js finds the database; both run in the same Jest process. */
const HANDLE = Symbol.for('sqlgate.testDatabase');

module.exports = async function startTestDatabaseForJest() {
  if (!fs.existsSync(builtPackage)) {
    throw new Error(
      `@sqlgate/testing is not built (${path.relative(process.cwd(), builtPackage)} is missing): run \`npm run build\` first, or run the tests with \`npm test\`.`,
    );
  }
  const { startTestDatabase, publishTestDatabase } = require(builtPackage);
  const started = Date.now();
  const database = await startTestDatabase();
  publishTestDatabase(database);
  globalThis[HANDLE] = database;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const tls = database.tls ? ', TLS' : '';
  process.stdout.write(
    `\nTest database: ${database.source} at ${database.host}:${database.port}/${database.database}${tls}, ready in ${seconds} s\n`,
  );
};
