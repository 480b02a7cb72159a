/**
 * The pg adapter passes core's connection port contract on a real PostgreSQL: the same suite that
 * core's in-memory fake passes, so the fake cannot promise what the adapter does not do.
 */
// A relative import: the suite is test code of core, not part of @sqlgate/core's public surface.
import { describeConnectionPortContract } from '../../core/test/contract/connection-port-contract';
import { createPostgresConnections } from '../src';
import { testTarget } from './support';

// A pool of one, so the session test gets back the very connection it released.
describeConnectionPortContract('the pg adapter', () => ({
  provider: createPostgresConnections({ max: 1 }),
  target: testTarget(),
}));
