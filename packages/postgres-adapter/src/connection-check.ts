/**
 * POST /api/test-connection: one connection outside the pools, closed at once. Same TLS rules as the
 * pools (docs/decisions.md 7), including `prefer`'s fallback to plain.
 */
import type { ConnectionCheck, ConnectionTarget } from '@sqlgate/core';
import { askServer } from './bounded-query';
import { clientClass, clientConfig } from './client';
import { toDomainError } from './pg-errors';
import { DEFAULT_FRAMING_LIMITS, ProtocolViolation } from './message-framing';
import { SilenceWatchdog } from './silence-watchdog';
import { tlsOptionsFor, type TlsSettings } from './tls';
import { TypeRegistry } from './types/type-registry';

// Whether the connection uses TLS is the client's own knowledge (the handshake it made), never a
// column the server could fill with anything.
const CHECK_SQL =
  "SELECT current_setting('server_version') AS version, current_database() AS database, current_user AS user";

export async function checkConnection(
  target: ConnectionTarget,
  connectTimeoutMs: number,
  tls: TlsSettings,
): Promise<ConnectionCheck> {
  const Client = clientClass(connectTimeoutMs, {
    serverName: target.host,
    sslMode: target.sslMode,
    tls: tlsOptionsFor(target.sslMode, tls),
    limits: DEFAULT_FRAMING_LIMITS,
  });
  const client = new Client(clientConfig(target));
  // An error after connect (the server going away) must not become an uncaught 'error' event.
  client.on('error', () => undefined);
  const started = performance.now();
  // The whole check, not only the connect, ends within the connect timeout: a server that logs in
  // and then says nothing must not hold the caller (or the socket) for ever.
  const deadline = new SilenceWatchdog(client.serverSocket, connectTimeoutMs, connectTimeoutMs);
  try {
    await client.connect();
    const [row] = await askServer<{ version: string; database: string; user: string }>(
      client.serverSocket,
      new TypeRegistry(),
      [CHECK_SQL],
    );
    // A row that lacks the columns asked for can only come from a server breaking the protocol.
    if (!row || typeof row.version !== 'string') {
      throw new ProtocolViolation('The server answered the check query with a malformed row');
    }
    return {
      serverVersion: row.version,
      database: row.database,
      user: row.user,
      ssl: client.serverSocket.encrypted,
      latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
    };
  } catch (error) {
    throw toDomainError(client.serverSocket.fault ?? error, undefined, client.serverSocket);
  } finally {
    deadline.stop();
    // Terminate politely, but do not wait for a server that may never close its side.
    void client.end().catch(() => undefined);
    client.serverSocket.destroy();
  }
}
