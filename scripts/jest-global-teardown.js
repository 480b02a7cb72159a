// Stops the database jest-global-setup.js started (a TEST_DATABASE_URL database is left alone).
const HANDLE = Symbol.for('sqlgate.testDatabase');

module.exports = async function stopTestDatabaseForJest() {
  const database = globalThis[HANDLE];
  if (database === undefined) return;
  delete globalThis[HANDLE];
  await database.stop();
};
