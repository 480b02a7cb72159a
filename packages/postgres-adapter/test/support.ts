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

/** A target on a fake or hostile server of the tests' own (no TLS, any credentials). */
export function fakeServerTarget(server: { host?: string; port: number }): ConnectionTarget {
  return {
    host: server.host ?? '127.0.0.1',
    port: server.port,
    user: 'u',
    database: 'd',
    sslMode: 'disable',
  };
}
