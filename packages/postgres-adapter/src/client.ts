/**
 * The pg Client sqlgate connects with. It sends only what the caller named: pg would otherwise fill
 * gaps from the service's own environment (PGPASSWORD, ~/.pgpass, PGOPTIONS, PGREPLICATION), and a
 * caller could log in with the service's credentials.
 */
import type { ConnectionTarget } from '@sqlgate/core';
import pg from 'pg';
import { passwordRequired } from './pg-errors';
import { adjustStartupParameters, streamOption } from './pg-internals';
import { PreparedStatements } from './prepared-statements';
import { ServerSocket, type ServerSocketOptions } from './server-socket';

export const APPLICATION_NAME = 'sqlgate';

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/** A pg client over sqlgate's own socket. */
export interface SqlgateClient extends pg.Client {
  readonly serverSocket: ServerSocket;
  /** The statements sqlgate prepared on this connection (docs/decisions.md 10.30). */
  readonly preparedStatements: PreparedStatements;
}

/**
 * A Client class over a ServerSocket (TLS, protocol guard, connection facts) whose connect attempts
 * give up after `connectTimeoutMs`.
 */
export function clientClass(
  connectTimeoutMs: number,
  socketOptions: ServerSocketOptions,
): new (config?: pg.ClientConfig) => SqlgateClient {
  return class extends pg.Client implements SqlgateClient {
    readonly serverSocket: ServerSocket;
    readonly preparedStatements = new PreparedStatements();

    constructor(config: pg.ClientConfig = {}) {
      const serverSocket = new ServerSocket(socketOptions);
      // The pool's own connectionTimeoutMillis is its wait for a free client; connecting has its own limit.
      // pg-pool keeps the password non-enumerable, so a spread alone would drop it. TLS is the
      // socket's business: pg sees a plain stream.
      super({
        ...config,
        password: config.password,
        connectionTimeoutMillis: connectTimeoutMs,
        ssl: false,
        stream: streamOption(serverSocket),
      });
      this.serverSocket = serverSocket;
      adjustStartupParameters(this, (parameters) => {
        const { options: _options, replication: _replication, ...sent } = parameters;
        return { ...sent, application_name: APPLICATION_NAME };
      });
      // pg emits 'error' on a client whose connection breaks. While the client is idle pg-pool handles
      // it; while it is lent nobody does, and an unhandled 'error' would end the process. The request
      // using the client learns of the break from its failed statement, and pg-pool drops the client
      // when it comes back, so there is nothing more to do here.
      this.on('error', () => undefined);
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(
      callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void),
    ): Promise<pg.Client> | void {
      if (!callback) {
        return new Promise((resolve, reject) => {
          this.connect((error: Error | null) => (error ? reject(error) : resolve(this)));
        });
      }
      const done = callback as ConnectCallback;
      super.connect((error: Error | null) => {
        // pg leaves the socket open when it gives up on its own (a password it cannot send): the
        // server would hold a backend for authentication_timeout (a minute) waiting for an answer.
        if (error) this.serverSocket.destroy();
        done(error, this);
      });
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
