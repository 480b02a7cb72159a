/**
 * The pg Client sqlgate connects with: it sends only what the caller named, never the service's
 * environment (PGPASSWORD, ~/.pgpass, PGOPTIONS...).
 */
import type { ConnectionTarget } from '@sqlgate/core';
import pg from 'pg';
import { passwordRequired } from './pg-errors';
import { streamOption } from './pg-internals';
import { PreparedStatements } from './prepared-statements';
import { ServerSocket, type ServerSocketOptions } from './server-socket';

export const APPLICATION_NAME = 'sqlgate';

/** A pg client over sqlgate's own socket. */
export interface SqlgateClient extends pg.Client {
  readonly serverSocket: ServerSocket;
  /** The statements sqlgate prepared on this connection (docs/decisions.md 10.30). */
  readonly preparedStatements: PreparedStatements;
}

/** What the socket is given besides its TLS and limits: set by the client class. */
type OwnSocketOptions = 'applicationName' | 'connectTimeoutMs';

/**
 * A Client class over a ServerSocket whose logins give up after `connectTimeoutMs`; only pg's
 * documented options are set.
 */
export function clientClass(
  connectTimeoutMs: number,
  socketOptions: Omit<ServerSocketOptions, OwnSocketOptions>,
): new (config?: pg.ClientConfig) => SqlgateClient {
  return class extends pg.Client implements SqlgateClient {
    readonly serverSocket: ServerSocket;
    readonly preparedStatements = new PreparedStatements();

    constructor(config: pg.ClientConfig = {}) {
      const serverSocket = new ServerSocket({
        ...socketOptions,
        applicationName: APPLICATION_NAME,
        connectTimeoutMs,
      });
      // pg-pool keeps the password non-enumerable, so a spread alone would drop it. TLS and the
      // connect timeout are the socket's business: pg sees a plain stream.
      super({
        ...config,
        password: closingOnRefusal(config.password, serverSocket),
        // pg-pool hands on its own wait for a free client as this: pg's timer is not used.
        connectionTimeoutMillis: 0,
        ssl: false,
        stream: streamOption(serverSocket),
      });
      this.serverSocket = serverSocket;
      // pg emits 'error' on a lent client whose connection breaks, which would end the process
      // unhandled; the request learns from its statement and pg-pool drops the client.
      this.on('error', () => undefined);
    }
  };
}

/**
 * `password`, closing `socket` once pg reported its refusal: pg leaves it open, and the server
 * would hold a backend for authentication_timeout.
 */
function closingOnRefusal(
  password: pg.ClientConfig['password'],
  socket: ServerSocket,
): pg.ClientConfig['password'] {
  if (typeof password !== 'function') return password;
  return () => {
    try {
      return password();
    } catch (error) {
      setImmediate(() => socket.destroy());
      throw error;
    }
  };
}
/** The pg configuration of a target: the documented fields and nothing else. */
export function clientConfig(target: ConnectionTarget): pg.ClientConfig {
  const { password } = target;
  return {
    // A policy-checked address is connected to as it is (never resolved again); TLS still names
    // the host (ServerSocketOptions.serverName), so SNI and verify-full's certificate check see
    // the name the caller gave.
    host: target.address ?? target.host,
    port: target.port,
    user: target.user,
    database: target.database,
    // A function, so pg never looks at PGPASSWORD or ~/.pgpass. pg calls it only when the server asks
    // for a password; when the caller gave none, the login fails as a refused login, not a broken
    // connection (see passwordRequired). An empty password counts as none, as in libpq.
    password: () => {
      if (password === undefined || password === '') throw passwordRequired();
      return password;
    },
    keepAlive: true,
    application_name: APPLICATION_NAME,
  };
}
