/**
 * One pg pool per target and credentials (docs/decisions.md 6): the key holds an HMAC of the
 * password, so a caller who knows all but the password never borrows another's connection.
 */
import type { AbortSignalLike, AcquireOptions, ConnectionTarget, PoolStat } from '@sqlgate/core';
import { ConnectionError, ErrorCodes, poolIdOf } from '@sqlgate/core';
import pg from 'pg';
import { clientClass, clientConfig, type SqlgateClient } from './client';
import { DEFAULT_FRAMING_LIMITS } from './message-framing';
import { PgConnection } from './pg-connection';
import { loggable, toDomainError } from './pg-errors';
import { tlsOptionsFor, type TlsSettings } from './tls';
import { TypeRegistry } from './types/type-registry';
import { PasswordDigests } from './password-digests';
import { PoolRoom } from './pool-room';
import { SessionStateProbe } from './session-state-probe';
import { learnServerIdentity, ServerIdentities, type ServerIdentity } from './server-identity';

export interface PoolLimits {
  /** Clients per pool (POOL_MAX). */
  max: number;
  /** An idle client is closed after this long (POOL_IDLE_TIMEOUT_MS). */
  idleTimeoutMs: number;
  /** An idle client this old is closed (POOL_MAX_LIFETIME_MS): see docs/decisions.md 10.19. */
  maxLifetimeMs: number;
  /** Connecting gives up after this long (CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Waiting for a free client gives up after this long (POOL_WAIT_TIMEOUT_MS). */
  waitTimeoutMs: number;
  /** Pools kept at once (POOL_TARGETS_MAX); the LRU idle one goes first (docs/decisions.md 10.43). */
  maxPools: number;
  /** A pool with no clients for this long is closed and removed. */
  unusedPoolTtlMs: number;
}

interface PoolEntry {
  key: string;
  poolId: string;
  pool: pg.Pool;
  /** Whether the target keeps session state between transactions (docs/decisions.md 10.32). */
  sessionState: SessionStateProbe;
  types: TypeRegistry;
  /** What the target's connections reported of standard_conforming_strings; unknown before one connected. */
  standardConformingStrings?: boolean;
  lastUsed: number;
  /** Connections lent and not yet back. */
  lent: number;
}

export interface PoolOptions {
  /** Reads are kept as named prepared statements per connection (docs/decisions.md 10.30). */
  preparedStatements: boolean;
  /** json values as RawJson, PostgreSQL's own text; false: parsed (`TypeRegistry`). */
  rawJson: boolean;
}

export class PoolRegistry {
  private readonly pools = new Map<string, PoolEntry>();
  private readonly digests = new PasswordDigests();
  /** The key of the pool last moved to the end of `pools` (the most recently used). */
  private lastUsedKey: string | undefined;
  /** The fields of the target `keyOf` was last asked for, and its key. */
  private lastKeyed: { target: ConnectionTarget; key: string } | undefined;
  private readonly sweeper: NodeJS.Timeout;
  /** New targets waiting for a pool to come free, while POOL_TARGETS_MAX are all busy. */
  private readonly room = new PoolRoom();
  /** Which database each pool's server says it is (docs/decisions.md 10.20), learned when asked. */
  private readonly identities: ServerIdentities;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits,
    private readonly tls: TlsSettings,
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
    private readonly options: PoolOptions = { preparedStatements: true, rawJson: true },
  ) {
    this.sweeper = setInterval(
      () => this.closeUnusedPools(),
      Math.min(limits.unusedPoolTtlMs, 30_000),
    );
    // The registry never keeps a process alive on its own.
    this.sweeper.unref();
    this.identities = new ServerIdentities({
      learn: (target) => learnServerIdentity(this.acquire(target), limits.connectTimeoutMs),
      keptMs: limits.maxLifetimeMs,
    });
  }

  /** Which database the target's pool reaches, as its server tells it (asked once, then kept). */
  serverIdentity(target: ConnectionTarget): Promise<ServerIdentity> {
    return this.identities.of(this.keyOf(target), target);
  }

  /** A connection of the target's pool; chained, not awaited: an async layer costs a microtask. */
  acquire(target: ConnectionTarget, options: AcquireOptions = {}): Promise<PgConnection> {
    return this.lend(target, options, Date.now() + this.limits.waitTimeoutMs);
  }

  /** `roomDeadline`: how long a new target may wait for a pool to come free. */
  private lend(
    target: ConnectionTarget,
    options: AcquireOptions,
    roomDeadline: number,
  ): Promise<PgConnection> {
    if (this.closed) {
      return Promise.reject(
        new ConnectionError(
          ErrorCodes.CONNECTION_FAILED,
          'The service is shutting down',
          'ESHUTDOWN',
        ),
      );
    }
    const entry = this.entryFor(target);
    if (!entry) return this.acquireWhenRoom(target, options, roomDeadline);
    entry.lent++;
    entry.lastUsed = Date.now();
    const { signal } = options;
    return this.liveClient(entry, signal).then(
      (client) =>
        new PgConnection(client, entry.types, {
          onReleased: () => {
            entry.lent--;
            entry.lastUsed = Date.now();
            if (entry.lent === 0) this.room.freed();
          },
          replace: () => this.liveClient(entry, signal),
          maxReplacements: this.limits.max,
          nameStatements: this.options.preparedStatements,
          sessionStateVerdict: (lent) => entry.sessionState.verdictFor(lent),
        }),
      (error: unknown) => {
        entry.lent--;
        if (entry.lent === 0) this.room.freed();
        throw error;
      },
    );
  }

  /** Waits for a pool to come free (docs/decisions.md 10.43); POOL_EXHAUSTED when none did. */
  private acquireWhenRoom(
    target: ConnectionTarget,
    options: AcquireOptions,
    deadline: number,
  ): Promise<PgConnection> {
    return this.room.wait(deadline - Date.now(), options.signal).then((outcome) => {
      if (outcome === 'room') return this.lend(target, options, deadline);
      if (outcome === 'aborted') throw requestAborted();
      throw new ConnectionError(
        ErrorCodes.POOL_EXHAUSTED,
        `No pool came free within ${this.limits.waitTimeoutMs} ms for a pool to ${poolIdOf(target)}: ` +
          `all ${this.limits.maxPools} pools sqlgate keeps (POOL_TARGETS_MAX) have connections lent`,
        'POOL_EXHAUSTED',
      );
    });
  }

  stats(): PoolStat[] {
    // Pools of one poolId with other passwords or sslModes are reported as one, as docs/interface.md names pools.
    const byId = new Map<string, PoolStat>();
    for (const { poolId, pool } of this.pools.values()) {
      const stat = byId.get(poolId) ?? {
        poolId,
        totalConnections: 0,
        idleConnections: 0,
        activeConnections: 0,
        waitingClients: 0,
      };
      stat.totalConnections += pool.totalCount;
      stat.idleConnections += pool.idleCount;
      stat.activeConnections += pool.totalCount - pool.idleCount;
      stat.waitingClients += pool.waitingCount;
      byId.set(poolId, stat);
    }
    return [...byId.values()];
  }

  /** standard_conforming_strings as the target's connections reported it; undefined before. */
  standardConformingStrings(target: ConnectionTarget): boolean | undefined {
    return this.pools.get(this.keyOf(target))?.standardConformingStrings;
  }

  /** Idle connections plus those the pool may still open; none while requests wait. */
  spareConnections(target: ConnectionTarget): number {
    const pool = this.pools.get(this.keyOf(target))?.pool;
    if (!pool) return this.limits.max;
    if (pool.waitingCount > 0) return 0;
    return pool.idleCount + Math.max(0, this.limits.max - pool.totalCount);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    this.room.freeAll();
    const entries = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(entries.map((entry) => entry.pool.end().catch(() => undefined)));
  }

  /** The pool key: target, sslMode and an HMAC of the password; never the password itself. */
  keyOf(target: ConnectionTarget): string {
    // A request asks for its target's key two or three times (its SQL's reading, its connection,
    // its cache's), and callers mostly send the same target again: comparing the fields with the
    // last ones costs less than joining them and hashing the result anew.
    const last = this.lastKeyed;
    if (last && sameTarget(last.target, target)) return last.key;
    const password = target.password === undefined ? '-' : `+${this.digests.of(target.password)}`;
    // The address too: a pool connects to the address it was created with.
    const key = [
      target.name ?? '',
      target.host,
      target.address ?? '',
      target.port,
      target.user,
      target.database,
      target.sslMode,
      password,
    ].join('\u0000');
    // A copy: the caller may change its object afterwards.
    this.lastKeyed = { target: targetFields(target), key };
    return key;
  }

  /** The target's pool; undefined when none may be made now (docs/decisions.md 10.43). */
  private entryFor(target: ConnectionTarget): PoolEntry | undefined {
    const key = this.keyOf(target);
    const existing = this.pools.get(key);
    if (existing) {
      // Map order is recency order: the first entry is the least recently used. The pool used
      // last is already last: moving it would cost the map a new table every few requests.
      if (key !== this.lastUsedKey) {
        this.pools.delete(key);
        this.pools.set(key, existing);
        this.lastUsedKey = key;
      }
      return existing;
    }
    if (!this.makeRoom()) return undefined;
    const Client = this.clientClassFor(target);
    const sessionState = new SessionStateProbe(
      () => new Client(clientConfig(target)),
      this.limits.connectTimeoutMs,
    );
    const pool = this.createPool(key, target, Client);
    pool.on('connect', (client) => sessionState.connectionOpened(client));
    const entry: PoolEntry = {
      key,
      poolId: poolIdOf(target),
      pool,
      sessionState,
      types: new TypeRegistry(this.options.rawJson),
      lastUsed: Date.now(),
      lent: 0,
    };
    this.pools.set(key, entry);
    this.lastUsedKey = key;
    return entry;
  }

  /** The client class of the target's connections: its TLS, its framing limits, its connect timeout. */
  private clientClassFor(target: ConnectionTarget): ReturnType<typeof clientClass> {
    return clientClass(this.limits.connectTimeoutMs, {
      serverName: target.host,
      sslMode: target.sslMode,
      tls: tlsOptionsFor(target.sslMode, this.tls),
      limits: DEFAULT_FRAMING_LIMITS,
    });
  }

  private createPool(
    key: string,
    target: ConnectionTarget,
    Client: ReturnType<typeof clientClass>,
  ): pg.Pool {
    const types = new TypeRegistry();
    const pool = new pg.Pool({
      ...clientConfig(target),
      Client,
      max: this.limits.max,
      idleTimeoutMillis: this.limits.idleTimeoutMs,
      // pg-pool multiplies by 1000 for its timer, so fractions of a second are kept.
      maxLifetimeSeconds: this.limits.maxLifetimeMs / 1000,
      connectionTimeoutMillis: this.limits.waitTimeoutMs,
      allowExitOnIdle: true,
      types: types.pgTypes,
    } as pg.PoolConfig);
    // A dropped idle connection must never crash the process: pg-pool removes it, we only note it.
    pool.on('error', (error) => this.log('idle connection error', loggable(error)));
    // With no connection left, the next one may reach another server (one replaced at the same
    // address): its identity is asked again.
    pool.on('remove', () => {
      if (pool.totalCount === 0) this.identities.forget(key);
    });
    return pool;
  }

  /**
   * A client from the pool that has not already seen its connection end: one whose backend was
   * terminated while idle is dropped here, before any statement is sent on it.
   */
  private liveClient(
    entry: PoolEntry,
    signal?: AbortSignalLike,
    dropped = 0,
  ): Promise<PooledClient> {
    return this.connect(entry, signal).then(
      (client) => {
        const { serverSocket } = client;
        if (serverSocket.ended && dropped < this.limits.max) {
          client.release(new Error('the connection ended while idle'));
          return this.liveClient(entry, signal, dropped + 1);
        }
        const setting = serverSocket.framing.facts.loginParameters?.get(
          'standard_conforming_strings',
        );
        if (setting !== undefined) entry.standardConformingStrings = setting === 'on';
        return client;
      },
      (error: unknown) => {
        throw toDomainError(error);
      },
    );
  }

  private connect(entry: PoolEntry, signal?: AbortSignalLike): Promise<PooledClient> {
    // Every client of the pool is made by clientClass: a SqlgateClient. An idle one is lent on
    // the next tick, so only a wait behind other requests or for a new connection listens for
    // the abort (an abort that comes within the tick is seen before anything is sent).
    const { pool } = entry;
    const { idleCount, waitingCount } = pool;
    // pg-pool queues a borrow unless it opens a new client for it.
    const queued = pool.totalCount >= this.limits.max || idleCount > 0;
    const deadline = this.acquisitionDeadline(entry, queued);
    const connecting = deadline(pool.connect());
    const waits = idleCount === 0 || idleCount < waitingCount;
    return (waits ? abortable(connecting, signal) : connecting) as Promise<PooledClient>;
  }

  /**
   * sqlgate's own POOL_WAIT_TIMEOUT_MS deadline, made before pg-pool's (which says so by message
   * only): its failure is then POOL_EXHAUSTED or CONNECT_TIMEOUT (docs/decisions.md 10.1).
   */
  private acquisitionDeadline(
    entry: PoolEntry,
    queued: boolean,
  ): (connecting: Promise<pg.PoolClient>) => Promise<pg.PoolClient> {
    const { waitTimeoutMs } = this.limits;
    if (waitTimeoutMs <= 0) return (connecting) => connecting;
    let expired = false;
    const timer = setTimeout(() => (expired = true), waitTimeoutMs);
    timer.unref();
    const timedOut = (): ConnectionError =>
      queued
        ? new ConnectionError(
            ErrorCodes.POOL_EXHAUSTED,
            `No connection to ${entry.poolId} became free within ${waitTimeoutMs} ms`,
            'POOL_EXHAUSTED',
          )
        : new ConnectionError(
            ErrorCodes.CONNECT_TIMEOUT,
            'Connection terminated due to connection timeout',
            'ETIMEDOUT',
          );
    return (connecting) =>
      connecting.then(
        (client) => {
          clearTimeout(timer);
          return client;
        },
        (error: unknown) => {
          clearTimeout(timer);
          throw expired ? timedOut() : error;
        },
      );
  }

  /** Whether a pool may be added: below the limit, or by closing the LRU pool that lends nothing. */
  private makeRoom(): boolean {
    if (this.pools.size < this.limits.maxPools) return true;
    for (const entry of this.pools.values()) {
      if (entry.lent === 0 && entry.pool.waitingCount === 0) {
        this.remove(entry);
        return true;
      }
    }
    return false;
  }

  private closeUnusedPools(): void {
    const cutoff = Date.now() - this.limits.unusedPoolTtlMs;
    for (const entry of [...this.pools.values()]) {
      if (entry.lent === 0 && entry.pool.totalCount === 0 && entry.lastUsed < cutoff)
        this.remove(entry);
    }
  }

  private remove(entry: PoolEntry): void {
    this.pools.delete(entry.key);
    void entry.pool
      .end()
      .catch((error: unknown) => this.log('closing a pool failed', loggable(error)));
  }
}

/** The fields of a target that its pool key depends on, copied. */
function targetFields(target: ConnectionTarget): ConnectionTarget {
  const { name, host, address, port, user, password, database, sslMode } = target;
  return { name, host, address, port, user, password, database, sslMode };
}

/** Whether two targets have the same pool key (the same fields). */
function sameTarget(a: ConnectionTarget, b: ConnectionTarget): boolean {
  return (
    a.name === b.name &&
    a.host === b.host &&
    a.address === b.address &&
    a.port === b.port &&
    a.user === b.user &&
    a.password === b.password &&
    a.database === b.database &&
    a.sslMode === b.sslMode
  );
}

function requestAborted(): ConnectionError {
  return new ConnectionError(ErrorCodes.CONNECTION_FAILED, 'The request was aborted', 'ABORTED');
}

/** A client lent by one of the registry's pools. */
export type PooledClient = pg.PoolClient & SqlgateClient;

/** Resolves like `promise`, or rejects when `signal` aborts first; a client that arrives late is released. */
function abortable(
  promise: Promise<pg.PoolClient>,
  signal?: AbortSignalLike,
): Promise<pg.PoolClient> {
  if (!signal) return promise;
  if (signal.aborted) {
    void promise.then(
      (client) => client.release(),
      () => undefined,
    );
    return Promise.reject(requestAborted());
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      reject(requestAborted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (client) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) client.release();
        else {
          settled = true;
          resolve(client);
        }
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          reject(error);
        }
      },
    );
  });
}
