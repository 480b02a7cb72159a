/**
 * The pg Client sqlgate connects with. It sends only what the caller named: pg would otherwise fill
 * gaps from the service's own environment (PGPASSWORD, ~/.pgpass, PGOPTIONS, PGREPLICATION), and a
 * caller could log in with the service's credentials.
 */
import type { ConnectionTarget } from '@sqlgate/core';
import pg from 'pg';
import type { ConnectionOptions } from 'node:tls';
import { passwordRequired } from './pg-errors';

export const APPLICATION_NAME = 'sqlgate';

/** What pg keeps on a client that the typings do not declare. */
interface SocketHolder {
  connection: { stream: { destroy(): void } };
}

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/** A Client class whose connect attempts give up after `connectTimeoutMs`. */
export function clientClass(connectTimeoutMs: number): typeof pg.Client {
  return class SqlgateClient extends pg.Client {
    constructor(config: pg.ClientConfig) {
      // The pool's own connectionTimeoutMillis is its wait for a free client; connecting has its own limit.
      // pg-pool keeps the password non-enumerable, so a spread alone would drop it.
      super({ ...config, password: config.password, connectionTimeoutMillis: connectTimeoutMs });
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
        if (error) (this as unknown as SocketHolder).connection.stream.destroy();
        done(error, this);
      });
    }

    getStartupConf(): Record<string, string> {
      const conf = (
        pg.Client.prototype as unknown as { getStartupConf(): Record<string, string> }
      ).getStartupConf.call(this);
      delete conf.options;
      delete conf.replication;
      conf.application_name = APPLICATION_NAME;
      return conf;
    }
  };
}

/** The pg configuration of a target: the documented fields and nothing else. */
export function clientConfig(
  target: ConnectionTarget,
  ssl: false | ConnectionOptions,
): pg.ClientConfig {
  const { password } = target;
  return {
    host: target.host,
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
    ssl,
    keepAlive: true,
    application_name: APPLICATION_NAME,
  };
}
