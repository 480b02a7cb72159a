/**
 * The result cache's scope of a target (docs/decisions.md 10.20): the database reached, as its
 * server tells it (`ServerIdentity`: the same directly, through a pooler, a proxy or another
 * address, and never the same for two clusters), and the credentials. Entries are served only
 * through the endpoint they were read through (its resolved address, port and database name, not
 * the host's spelling or the sslMode), since a pooler may log in as another user or with other
 * settings; a write through any endpoint invalidates every entry of the database.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ConnectionError, ErrorCodes, type CacheScope, type ConnectionTarget } from '@sqlgate/core';
import { PasswordDigests } from './password-digests';
import type { ServerIdentity } from './server-identity';

/** The address a host name resolves to first (the one a connection tries first). */
export type ResolveFirst = (host: string) => Promise<string>;

export interface CacheScopesOptions {
  /** The identity of the server the target's connections reach (asked of its pool). */
  identify: (target: ConnectionTarget) => Promise<ServerIdentity>;
  /** Name resolution; the system resolver (getaddrinfo) when absent. */
  resolve?: ResolveFirst;
  /** How long a resolved name is remembered. Default 5 s: long enough to spare a lookup per request, short enough to follow a moved server. */
  ttlMs?: number;
  /** Names remembered at once; the oldest is forgotten first. */
  maxNames?: number;
  now?: () => number;
  /** Key of the password digests in scopes; random per process when absent (`PasswordDigests`). */
  credentialKey?: Uint8Array | string;
}

const systemResolve: ResolveFirst = async (host) => (await lookup(host)).address;

/**
 * One spelling per address: IPv4-mapped IPv6 as IPv4, IPv6 in its compressed lower-case form.
 * Loopback addresses are kept apart: 127.0.0.2 may be a proxy to another server than 127.0.0.1.
 */
export function exactAddress(address: string): string {
  const text = address.toLowerCase();
  if (isIP(text) !== 6) return text;
  const compressed = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  // IPv4-mapped, in either spelling (::ffff:127.0.0.1 compresses to ::ffff:7f00:1): the IPv4 address.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!mapped) return compressed;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

interface Remembered {
  address: Promise<string>;
  expires: number;
}

export class CacheScopes {
  private readonly identify: (target: ConnectionTarget) => Promise<ServerIdentity>;
  private readonly resolve: ResolveFirst;
  private readonly ttlMs: number;
  private readonly maxNames: number;
  private readonly now: () => number;
  private readonly names = new Map<string, Remembered>();
  /** Scopes by server identity, address, port, database, user and password (memory that already holds them). */
  private readonly scopes = new Map<string, CacheScope>();
  /** Keyed password hashes: the scope never reveals a password, even to someone holding the cache. */
  private readonly digests: PasswordDigests;

  constructor(options: CacheScopesOptions) {
    this.identify = options.identify;
    this.digests = new PasswordDigests(options.credentialKey);
    this.resolve = options.resolve ?? systemResolve;
    this.ttlMs = options.ttlMs ?? 5_000;
    this.maxNames = options.maxNames ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The scope of `target`. Its server is asked which database it is, once per pool; its endpoint
   * is the address a policy checked (the one it connects to), or its host resolved. Rejects with a
   * ConnectionError when the server cannot be reached or will not tell, or the name does not
   * resolve.
   */
  scopeOf(target: ConnectionTarget): Promise<CacheScope> {
    const known = target.address ?? (isIP(target.host) === 0 ? undefined : target.host);
    // An address needs no lookup: only the identity is awaited (once per request, a turn fewer).
    if (known !== undefined) {
      return this.identify(target).then((identity) => this.remembered(identity, known, target));
    }
    return Promise.all([this.addressOf(target.host), this.identify(target)]).then(
      ([resolved, identity]) => this.remembered(identity, resolved, target),
    );
  }

  /**
   * The scope of `target` at `resolved`, remembered: the same caller asks with the same target on
   * every request. Keyed by the fields, each after its length, so that no two targets share a key
   * whatever characters they hold.
   */
  private remembered(
    identity: ServerIdentity,
    resolved: string,
    target: ConnectionTarget,
  ): CacheScope {
    const { port, database, user, password } = target;
    const key =
      `${identity.cluster.length}:${identity.cluster}${identity.database.length}:` +
      `${identity.database}${resolved.length}:${resolved}${port}:${database.length}:${database}` +
      `${user.length}:${user}${password === undefined ? '-' : `${password.length}:${password}`}`;
    let scope = this.scopes.get(key);
    if (scope === undefined) {
      scope = this.scopeAt(identity, resolved, target);
      if (this.scopes.size >= this.maxNames) this.scopes.clear();
      this.scopes.set(key, scope);
    }
    return scope;
  }

  private scopeAt(
    identity: ServerIdentity,
    resolved: string,
    target: ConnectionTarget,
  ): CacheScope {
    const server = JSON.stringify([identity.cluster]);
    const database = JSON.stringify([identity.cluster, identity.database]);
    const endpoint = JSON.stringify([
      identity.cluster,
      identity.database,
      exactAddress(resolved),
      target.port,
      target.database,
    ]);
    const password = target.password === undefined ? '-' : `+${this.digests.of(target.password)}`;
    return { server, database, endpoint, credentials: JSON.stringify([target.user, password]) };
  }

  private async addressOf(host: string): Promise<string> {
    if (isIP(host) !== 0) return host;
    const name = host.toLowerCase();
    const now = this.now();
    const known = this.names.get(name);
    if (known && known.expires > now) return known.address;
    const address = this.resolve(name);
    this.remember(name, { address, expires: now + this.ttlMs });
    try {
      return await address;
    } catch (error) {
      // A failure is not remembered: the next request asks again.
      if (this.names.get(name)?.address === address) this.names.delete(name);
      const code = (error as { code?: string }).code ?? 'ENOTFOUND';
      throw new ConnectionError(
        ErrorCodes.CONNECTION_FAILED,
        `Cannot resolve host '${host}'`,
        code,
        {
          cause: error,
        },
      );
    }
  }

  private remember(name: string, entry: Remembered): void {
    this.names.delete(name);
    this.names.set(name, entry);
    if (this.names.size > this.maxNames) {
      const oldest = this.names.keys().next();
      if (!oldest.done) this.names.delete(oldest.value);
    }
  }
}
