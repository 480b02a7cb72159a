/**
 * One pg pool per target and credentials (DECISIONS.md section 6). The key holds host, port, user,
 * database, sslMode and an HMAC of the password under a per-process random key: a caller who knows
 * everything but the password never borrows a connection someone else opened.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { AcquireOptions, ConnectionTarget, PoolStat } from '@sqlgate/core';
import { ConnectionError, ErrorCodes } from '@sqlgate/core';
import pg from 'pg';
import { clientClass, clientConfig } from './client';
import { PgConnection } from './pg-connection';
import { loggable, toDomainError } from './pg-errors';
import { isTlsRefused, tlsOptionsFor, type TlsSettings } from './tls';
import { TypeRegistry } from './types/type-registry';

export interface PoolLimits {
  /** Clients per pool (POOL_MAX). */
  max: number;
  /** An idle client is closed after this long (POOL_IDLE_TIMEOUT_MS). */
  idleTimeoutMs: number;
  /** Connecting gives up after this long (CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
  /** Waiting for a free client gives up after this long (POOL_WAIT_TIMEOUT_MS). */
  waitTimeoutMs: number;
  /** Pools kept at once (POOL_TARGETS_MAX); the least recently used idle pool goes first. */
  maxPools: number;
  /** A pool with no clients for this long is closed and removed. */
  unusedPoolTtlMs: number;
}

interface PoolEntry {
  key: string;
  poolId: string;
  pool: pg.Pool;
  types: TypeRegistry;
  /** `prefer` found the server without TLS: later clients connect in plain. */
  plain: boolean;
  lastUsed: number;
  /** Connections lent and not yet back. */
  lent: number;
}

const POOL_WAIT_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

export class PoolRegistry {
  private readonly pools = new Map<string, PoolEntry>();
  private readonly hmacKey = randomBytes(32);
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits,
    private readonly tls: TlsSettings,
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
  ) {
    this.sweeper = setInterval(
      () => this.closeUnusedPools(),
      Math.min(limits.unusedPoolTtlMs, 30_000),
    );
    // The registry never keeps a process alive on its own.
    this.sweeper.unref();
  }

  async acquire(target: ConnectionTarget, options: AcquireOptions = {}): Promise<PgConnection> {
    if (this.closed)
      throw new ConnectionError(
        ErrorCodes.CONNECTION_FAILED,
        'The service is shutting down',
        'ESHUTDOWN',
      );
    const entry = this.entryFor(target);
    entry.lent++;
    entry.lastUsed = Date.now();
    try {
      const client = await this.liveClient(entry, target, options.signal);
      return new PgConnection(client, entry.types, {
        onReleased: () => {
          entry.lent--;
          entry.lastUsed = Date.now();
        },
        replace: () => this.liveClient(entry, target, options.signal),
        maxReplacements: this.limits.max,
      });
    } catch (error) {
      entry.lent--;
      throw error;
    }
  }

  stats(): PoolStat[] {
    // Pools of one poolId with other passwords or sslModes are reported as one, as SPEC names pools.
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

  /** Number of pools held (several may share one poolId). */
  get size(): number {
    return this.pools.size;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    const entries = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(entries.map((entry) => entry.pool.end().catch(() => undefined)));
  }

  /** The pool key: target, sslMode and an HMAC of the password; never the password itself. */
  keyOf(target: ConnectionTarget): string {
    const password =
      target.password === undefined
        ? '-'
        : `+${createHmac('sha256', this.hmacKey).update(target.password).digest('base64')}`;
    return [target.host, target.port, target.user, target.database, target.sslMode, password].join(
      '\u0000',
    );
  }

  private entryFor(target: ConnectionTarget): PoolEntry {
    const key = this.keyOf(target);
    const existing = this.pools.get(key);
    if (existing) {
      // Map order is recency order: the first entry is the least recently used.
      this.pools.delete(key);
      this.pools.set(key, existing);
      return existing;
    }
    this.makeRoom();
    const entry: PoolEntry = {
      key,
      poolId: `${target.host}:${target.port}:${target.user}:${target.database}`,
      pool: this.createPool(target, false),
      types: new TypeRegistry(),
      plain: false,
      lastUsed: Date.now(),
      lent: 0,
    };
    this.pools.set(key, entry);
    return entry;
  }

  private createPool(target: ConnectionTarget, plain: boolean): pg.Pool {
    const types = new TypeRegistry();
    const ssl = tlsOptionsFor(plain ? 'prefer-plain' : target.sslMode, this.tls);
    const pool = new pg.Pool({
      ...clientConfig(target, ssl),
      Client: clientClass(this.limits.connectTimeoutMs),
      max: this.limits.max,
      idleTimeoutMillis: this.limits.idleTimeoutMs,
      connectionTimeoutMillis: this.limits.waitTimeoutMs,
      allowExitOnIdle: true,
      types: types.pgTypes,
    } as pg.PoolConfig);
    // A dropped idle connection must never crash the process: pg-pool removes it, we only note it.
    pool.on('error', (error) => this.log('idle connection error', loggable(error)));
    return pool;
  }

  /**
   * A client from the pool that has not already seen its connection end: one whose backend was
   * terminated while idle is dropped here, before any statement is sent on it.
   */
  private async liveClient(
    entry: PoolEntry,
    target: ConnectionTarget,
    signal?: AbortSignal,
  ): Promise<pg.PoolClient> {
    for (let dropped = 0; ; dropped++) {
      const client = await this.connect(entry, target, signal);
      if (!hasLostConnection(client) || dropped >= this.limits.max) return client;
      client.release(new Error('the connection ended while idle'));
    }
  }

  private async connect(
    entry: PoolEntry,
    target: ConnectionTarget,
    signal?: AbortSignal,
  ): Promise<pg.PoolClient> {
    try {
      return await abortable(entry.pool.connect(), signal);
    } catch (error) {
      if (target.sslMode === 'prefer' && !entry.plain && isTlsRefused(error)) {
        // libpq's `prefer`: the server refused TLS, so this target is reached in plain from now on.
        const tlsPool = entry.pool;
        entry.pool = this.createPool(target, true);
        entry.plain = true;
        void tlsPool.end().catch(() => undefined);
        return this.connect(entry, target, signal);
      }
      if (error instanceof Error && error.message === POOL_WAIT_TIMEOUT_MESSAGE) {
        throw new ConnectionError(
          ErrorCodes.POOL_EXHAUSTED,
          `No connection to ${entry.poolId} became free within ${this.limits.waitTimeoutMs} ms`,
          'POOL_EXHAUSTED',
          { cause: error },
        );
      }
      throw toDomainError(error);
    }
  }

  /** At the limit, closes the least recently used pool that has nothing lent. */
  private makeRoom(): void {
    if (this.pools.size < this.limits.maxPools) return;
    for (const entry of this.pools.values()) {
      if (entry.lent === 0 && entry.pool.waitingCount === 0) {
        this.remove(entry);
        return;
      }
    }
    // Every pool is busy: the new one is allowed over the limit until one frees up.
  }

  private closeUnusedPools(): void {
    const cutoff = Date.now() - this.limits.unusedPoolTtlMs;
    for (const entry of [...this.pools.values()]) {
      if (entry.lent === 0 && entry.pool.totalCount === 0 && entry.lastUsed < cutoff)
        this.remove(entry);
    }
    while (this.pools.size > this.limits.maxPools) {
      const idle = [...this.pools.values()].find((entry) => entry.lent === 0);
      if (!idle) break;
      this.remove(idle);
    }
  }

  private remove(entry: PoolEntry): void {
    this.pools.delete(entry.key);
    void entry.pool
      .end()
      .catch((error: unknown) => this.log('closing a pool failed', loggable(error)));
  }
}

/** What pg keeps on a client about its connection's state; the typings do not declare it. */
interface ConnectionState {
  _ending: boolean;
  _queryable: boolean;
  connection: { stream: { destroyed: boolean } };
}

function hasLostConnection(client: pg.PoolClient): boolean {
  const state = client as unknown as ConnectionState;
  return state._ending || !state._queryable || state.connection.stream.destroyed;
}

/** Resolves like `promise`, or rejects when `signal` aborts first; a client that arrives late is released. */
function abortable(promise: Promise<pg.PoolClient>, signal?: AbortSignal): Promise<pg.PoolClient> {
  if (!signal) return promise;
  if (signal.aborted) {
    void promise.then(
      (client) => client.release(),
      () => undefined,
    );
    return Promise.reject(
      new ConnectionError(ErrorCodes.CONNECTION_FAILED, 'The request was aborted', 'ABORTED'),
    );
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      reject(
        new ConnectionError(ErrorCodes.CONNECTION_FAILED, 'The request was aborted', 'ABORTED'),
      );
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
