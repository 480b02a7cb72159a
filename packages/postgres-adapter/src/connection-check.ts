/**
 * POST /api/test-connection: one connection outside the pools, closed at once. Same TLS rules as the
 * pools (DECISIONS 7), including `prefer`'s fallback to plain.
 */
import type { ConnectionCheck, ConnectionTarget } from '@sqlgate/core';
import { clientClass, clientConfig } from './client';
import { toDomainError } from './pg-errors';
import { isTlsRefused, tlsOptionsFor, type TlsSettings } from './tls';

const CHECK_SQL =
  "SELECT current_setting('server_version') AS version, current_database() AS database, current_user AS user, " +
  'COALESCE((SELECT ssl FROM pg_catalog.pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS ssl';

export async function checkConnection(
  target: ConnectionTarget,
  connectTimeoutMs: number,
  tls: TlsSettings,
  plain = false,
): Promise<ConnectionCheck> {
  const Client = clientClass(connectTimeoutMs);
  const client = new Client(
    clientConfig(target, tlsOptionsFor(plain ? 'prefer-plain' : target.sslMode, tls)),
  );
  // An error after connect (the server going away) must not become an uncaught 'error' event.
  client.on('error', () => undefined);
  const started = performance.now();
  try {
    await client.connect();
    const { rows } = await client.query<{
      version: string;
      database: string;
      user: string;
      ssl: boolean;
    }>(CHECK_SQL);
    const row = rows[0];
    if (!row) throw new Error('The server answered the check query with no row');
    return {
      serverVersion: row.version,
      database: row.database,
      user: row.user,
      ssl: row.ssl,
      latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
    };
  } catch (error) {
    if (target.sslMode === 'prefer' && !plain && isTlsRefused(error)) {
      return checkConnection(target, connectTimeoutMs, tls, true);
    }
    throw toDomainError(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}
