/**
 * The pg Client sqlgate connects with. It sends only what the caller named: pg would otherwise fill
 * gaps from the service's own environment (PGPASSWORD, ~/.pgpass, PGOPTIONS, PGREPLICATION), and a
 * caller could log in with the service's credentials.
 */
import type { ConnectionTarget } from '@sqlgate/core';
import pg from 'pg';
import type { ConnectionOptions } from 'node:tls';

export const APPLICATION_NAME = 'sqlgate';

/** A Client class whose connect attempts give up after `connectTimeoutMs`. */
export function clientClass(connectTimeoutMs: number): typeof pg.Client {
  return class SqlgateClient extends pg.Client {
    constructor(config: pg.ClientConfig) {
      // The pool's own connectionTimeoutMillis is its wait for a free client; connecting has its own limit.
      // pg-pool keeps the password non-enumerable, so a spread alone would drop it.
      super({ ...config, password: config.password, connectionTimeoutMillis: connectTimeoutMs });
    }

    getStartupConf(): Record<string, string> {
      const conf = (pg.Client.prototype as unknown as { getStartupConf(): Record<string, string> }).getStartupConf.call(this);
      delete conf.options;
      delete conf.replication;
      conf.application_name = APPLICATION_NAME;
      return conf;
    }
  };
}

/** The pg configuration of a target: the documented fields and nothing else. */
export function clientConfig(target: ConnectionTarget, ssl: false | ConnectionOptions): pg.ClientConfig {
  const { password } = target;
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    database: target.database,
    // A function: pg never looks at PGPASSWORD or ~/.pgpass, and an absent password is sent as none.
    password: () => password as string,
    ssl,
    keepAlive: true,
    application_name: APPLICATION_NAME,
  };
}
