/**
 * The pg adapter passes core's connection port contract on a real PostgreSQL: the same suite that
 * core's in-memory fake passes, so the fake cannot promise what the adapter does not do.
 */
// A relative import: the suite is test code of core, not part of @sqlgate/core's public surface.
import { describeConnectionPortContract } from '../../core/test/contract/connection-port-contract';
import { Client } from 'pg';
import { createPostgresConnections } from '../src';
import { database, testTarget } from './support';

const OTHER = { user: 'contract_other_login', password: 'contract-secret' };

beforeAll(async () => {
  const client = new Client({ connectionString: database.connectionString });
  await client.connect();
  try {
    await client.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${OTHER.user}') THEN
        CREATE ROLE ${OTHER.user} LOGIN PASSWORD '${OTHER.password}';
      END IF;
    END $$`);
  } finally {
    await client.end();
  }
});

// A pool of one, so the session test gets back the very connection it released.
describeConnectionPortContract('the pg adapter', () => ({
  provider: createPostgresConnections({ max: 1 }),
  target: testTarget(),
  otherLogin: { ...testTarget(), ...OTHER },
}));
