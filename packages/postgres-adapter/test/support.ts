/** The run's test database as a connection target, for the adapter's tests. */
import type { ConnectionTarget, SslMode } from '@sqlgate/core';
import { testDatabaseFromEnvironment } from '@sqlgate/testing';

export const database = testDatabaseFromEnvironment();

export function testTarget(sslMode: SslMode = 'disable'): ConnectionTarget {
  return {
    host: database.host,
    port: database.port,
    user: database.user,
    password: database.password,
    database: database.database,
    sslMode,
  };
}
