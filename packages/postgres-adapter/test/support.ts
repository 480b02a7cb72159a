/** The run's test database as a connection target, for the adapter's tests. */
import type { ConnectionTarget, PortFailure, Settled, SslMode } from '@sqlgate/core';
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

/**
 * The failure a port call settled with (docs/decisions.md 10.21). The test fails if the call
 * succeeded, and a rejection (a defect) propagates: neither passes for a failure.
 */
export async function failureOf<T>(pending: Promise<Settled<T>>): Promise<PortFailure> {
  const settled = await pending;
  if (settled.ok) throw new Error('the call succeeded; a failure was expected');
  return settled.error;
}
