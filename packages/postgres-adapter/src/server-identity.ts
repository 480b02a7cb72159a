/**
 * Which database a target reaches, as its server tells it (docs/decisions.md 10.20): the cluster's
 * system identifier and the database's oid, the same through any pooler, proxy or alias. Learned
 * once per pool and kept; learned again once the pool has no connection left or they may all be
 * newer (POOL_MAX_LIFETIME_MS).
 */
import {
  ConnectionError,
  DatabaseError,
  ErrorCodes,
  type Connection,
  type ConnectionTarget,
} from '@sqlgate/core';

export interface ServerIdentity {
  /**
   * pg_control_system()'s system_identifier: chosen by initdb, readable by any login, shared by
   * replicas and copies of the data directory.
   */
  cluster: string;
  /** The oid of the database the connection reached, whatever name a pooler was given for it. */
  database: string;
}

/** Schema-qualified: a caller's own function of the same name on its search_path is not called. */
export const SERVER_IDENTITY_SQL =
  'SELECT s.system_identifier::text, d.oid::text FROM pg_catalog.pg_control_system() s, ' +
  'pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()';

/**
 * A server that refused the identity query is asked again after this long; meanwhile its reads
 * bypass the cache without a round trip.
 */
const REFUSED_FOR_MS = 60_000;

/** Asks the server on `connection` which database it is; releases the connection. */
export async function learnServerIdentity(
  lent: Promise<Connection>,
  silenceLimitMs: number,
): Promise<ServerIdentity> {
  const connection = await lent;
  try {
    const settled = await connection.run(SERVER_IDENTITY_SQL, {
      rowMode: 'array',
      maxRows: 1,
      silenceLimitMs,
    });
    if (!settled.ok) {
      const { error } = settled;
      if (error instanceof DatabaseError && REFUSALS.test(error.fields.code)) {
        throw refused(error.message);
      }
      throw error;
    }
    const [cluster, database] = (settled.value.rows[0] ?? []) as unknown[];
    if (typeof cluster !== 'string' || typeof database !== 'string') {
      throw refused('it answered no system identifier or database oid');
    }
    return { cluster, database };
  } finally {
    connection.release();
  }
}

/**
 * The server's errors that it would answer again: no privilege, no such function or relation, a
 * feature it lacks (SQLSTATE classes 42 and 0A). Others (a shutdown, a conflict) may pass.
 */
const REFUSALS = /^(42|0A)/;

const IDENTITY_REFUSED = 'IDENTITY_REFUSED';

/** The server answered, and would not tell. */
function refused(why: string): ConnectionError {
  return new ConnectionError(
    ErrorCodes.CONNECTION_FAILED,
    `The server did not tell which database it is (${why}): its results are not cached`,
    IDENTITY_REFUSED,
  );
}

function isRefusal(error: unknown): boolean {
  return error instanceof ConnectionError && error.systemCode === IDENTITY_REFUSED;
}

interface Known {
  identity: Promise<ServerIdentity>;
  /** After this (ms), the next request learns it again. */
  until: number;
}

export interface ServerIdentitiesOptions {
  /** Asks the target's server (`learnServerIdentity` on a connection of its pool). */
  learn: (target: ConnectionTarget) => Promise<ServerIdentity>;
  /** How long a learned identity is kept at most (POOL_MAX_LIFETIME_MS); 0: while the pool lasts. */
  keptMs: number;
  now?: () => number;
}

/** The identities of the pools' servers, by pool key. */
export class ServerIdentities {
  private readonly known = new Map<string, Known>();
  private readonly now: () => number;

  constructor(private readonly options: ServerIdentitiesOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The identity of the server `target`'s pool reaches, one shared round trip when not known; a
   * refusal is remembered for a while, a failure to reach it not.
   */
  of(poolKey: string, target: ConnectionTarget): Promise<ServerIdentity> {
    const now = this.now();
    const known = this.known.get(poolKey);
    if (known && known.until > now) return known.identity;
    const { keptMs } = this.options;
    const learning: Known = {
      identity: this.options.learn(target),
      until: keptMs > 0 ? now + keptMs : Infinity,
    };
    this.known.set(poolKey, learning);
    learning.identity.catch((error: unknown) => {
      if (this.known.get(poolKey) !== learning) return;
      if (isRefusal(error)) learning.until = this.now() + REFUSED_FOR_MS;
      else this.known.delete(poolKey);
    });
    return learning.identity;
  }

  /** The pool's connections are all gone: its next connection may reach another server. */
  forget(poolKey: string): void {
    this.known.delete(poolKey);
  }
}
