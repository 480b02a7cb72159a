/**
 * The result cache's scope of a target (docs/decisions.md 10.20): the server and database actually
 * reached, whatever the host's spelling or the sslMode, and the credentials. `localhost`,
 * `127.0.0.1` and `::1` are one server; `db.internal` and the address it resolves to are one server.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ConnectionError, ErrorCodes, type CacheScope, type ConnectionTarget } from '@sqlgate/core';
import { PasswordDigests } from './password-digests';

/** The address a host name resolves to first (the one a connection tries first). */
export type ResolveFirst = (host: string) => Promise<string>;

export interface CacheScopesOptions {
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

/** Loopback addresses all reach this machine: one server, however it is spelled. */
const LOOPBACK = 'loopback';

/**
 * One spelling per address: IPv4-mapped IPv6 as IPv4, IPv6 in its compressed lower-case form,
 * every loopback address as one (for invalidation: a write through `localhost` must reach what
 * was cached through `127.0.0.1`).
 */
export function canonicalAddress(address: string): string {
  const exact = exactAddress(address);
  const family = isIP(exact);
  // The unspecified address (0.0.0.0, ::) reaches this machine too when connected to.
  if (family === 4 && (exact.startsWith('127.') || exact === '0.0.0.0')) return LOOPBACK;
  if (family === 6 && (exact === '::1' || exact === '::')) return LOOPBACK;
  return exact;
}

/**
 * One spelling per address, loopback addresses kept apart: 127.0.0.2 may be another server than
 * 127.0.0.1 (a proxy, a second cluster), so what one answered is never served for the other.
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
  private readonly resolve: ResolveFirst;
  private readonly ttlMs: number;
  private readonly maxNames: number;
  private readonly now: () => number;
  private readonly names = new Map<string, Remembered>();
  /** Scopes by address, port, database, user and password (memory that already holds them). */
  private readonly scopes = new Map<string, CacheScope>();
  /** Keyed password hashes: the scope never reveals a password, even to someone holding the cache. */
  private readonly digests: PasswordDigests;

  constructor(options: CacheScopesOptions = {}) {
    this.digests = new PasswordDigests(options.credentialKey);
    this.resolve = options.resolve ?? systemResolve;
    this.ttlMs = options.ttlMs ?? 5_000;
    this.maxNames = options.maxNames ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The scope of `target`. A target whose address a policy checked is identified by that address
   * (the one it connects to); otherwise its host is resolved. Rejects with a ConnectionError when
   * the name does not resolve.
   */
  async scopeOf(target: ConnectionTarget): Promise<CacheScope> {
    const resolved = target.address ?? (await this.addressOf(target.host));
    // The same caller asks with the same target on every request: its scope is remembered.
    // A JSON array, so that no two targets share a key whatever characters their fields hold.
    const key = JSON.stringify([
      resolved,
      target.port,
      target.database,
      target.user,
      target.password ?? null,
    ]);
    let scope = this.scopes.get(key);
    if (scope === undefined) {
      scope = this.scopeAt(resolved, target);
      if (this.scopes.size >= this.maxNames) this.scopes.clear();
      this.scopes.set(key, scope);
    }
    return scope;
  }

  private scopeAt(resolved: string, target: ConnectionTarget): CacheScope {
    const address = canonicalAddress(resolved);
    const server = JSON.stringify([address, target.port]);
    const database = JSON.stringify([address, target.port, target.database]);
    const endpoint = JSON.stringify([exactAddress(resolved), target.port, target.database]);
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
