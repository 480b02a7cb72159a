/**
 * API-key limits shared by every instance using one Redis (docs/limits.md): token buckets and
 * concurrency leases kept by the scripts of limit-scripts.ts, one atomic round trip each.
 *
 * When Redis fails or does not answer within `timeoutMs`, the call is decided by a memory store of
 * this instance instead, and `onDegraded` is told: a limit that silently stopped limiting would be
 * worse than one counted per instance for a while. After a failure, calls go straight to memory for
 * `retryRedisAfterMs`, so an outage costs each request nothing rather than `timeoutMs`.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  CONCURRENCY_RETRY_AFTER_MS,
  createMemoryLimitStore,
  requireConcurrencyCap,
  requireRateRule,
  type Clock,
  type ConcurrencySlot,
  type LimitDecision,
  type LimitStore,
  type MemoryLimitStore,
  type RateRule,
} from '@sqlgate/core';
import { RedisConnection } from './redis-connection';
import { concurrencyKey, rateBucketKey } from './key-layout';
import { LIMIT_SCRIPTS, type LimitScriptName } from './limit-scripts';

export interface RedisLimitStoreOptions {
  /**
   * An ioredis client, owned by the caller: `close()` does not end it. One with
   * `enableOfflineQueue: false` refuses at once while disconnected instead of queueing.
   */
  redis: Redis;
  /** Prepended to every key; instances share limits when they share Redis and prefix. */
  prefix: string;
  /** A call Redis has not answered within this many milliseconds is decided in memory instead. */
  timeoutMs: number;
  /** Monotonic milliseconds, for the memory fallback and the pause after a failure. Default `performance.now()`. */
  clock?: Pick<Clock, 'now'>;
  /** How long a slot's lease lasts unless renewed; a held slot is renewed every third of it. Default 30 s. */
  leaseMs?: number;
  /** After a failure, calls skip Redis for this many milliseconds. Default 1000. */
  retryRedisAfterMs?: number;
  /** Told why, each time a call to Redis failed and the call was decided by this instance alone. */
  onDegraded?: (reason: string) => void;
}

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_RETRY_REDIS_AFTER_MS = 1000;

type EnterAnswer = Awaited<ReturnType<LimitStore['enter']>>;

/** Client statuses in which a command would only be queued: Redis is known to be away. */
const DISCONNECTED = new Set(['close', 'reconnecting', 'end']);

/** Longest wait for a connection being made, as the cache's calls wait (redis-connection.ts). */
const CONNECT_BOUND_MS = 2000;

/** Why a call went to memory: Redis refused, failed, or did not answer in time. */
class RedisUnavailable extends Error {}

/**
 * A `LimitStore` in Redis, shared by every instance using the same Redis and prefix.
 *
 * @example
 * const limits = createRedisLimitStore({ redis: new Redis(url), prefix: 'sqlgate:', timeoutMs: 50 });
 * const decision = await limits.take(apiKeyId, { tokens: 50, perMs: 1000, burst: 50 });
 */
export function createRedisLimitStore(options: RedisLimitStoreOptions): LimitStore & {
  close(): Promise<void>;
} {
  return new RedisLimitStore(options);
}

class RedisLimitStore implements LimitStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly retryRedisAfterMs: number;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly fallback: MemoryLimitStore;
  private readonly onDegraded: (reason: string) => void;
  private readonly shas = new Map<LimitScriptName, string>();
  private ready: Promise<void> | undefined;
  /** Stops the renewal of each slot held in Redis. */
  private readonly renewals = new Set<() => void>();
  private skipRedisUntil = Number.NEGATIVE_INFINITY;

  constructor(options: RedisLimitStoreOptions) {
    if (typeof options?.redis?.evalsha !== 'function')
      throw new TypeError('redis must be an ioredis client');
    if (typeof options.prefix !== 'string') throw new TypeError('prefix must be a string');
    this.redis = options.redis;
    this.prefix = options.prefix;
    this.timeoutMs = positive(options.timeoutMs, 'timeoutMs');
    this.leaseMs = positive(options.leaseMs ?? DEFAULT_LEASE_MS, 'leaseMs');
    this.retryRedisAfterMs = nonNegative(
      options.retryRedisAfterMs ?? DEFAULT_RETRY_REDIS_AFTER_MS,
      'retryRedisAfterMs',
    );
    this.clock = options.clock ?? performance;
    this.fallback = createMemoryLimitStore(this.clock);
    this.onDegraded = options.onDegraded ?? (() => undefined);
    for (const [name, lua] of Object.entries(LIMIT_SCRIPTS)) {
      this.shas.set(name as LimitScriptName, createHash('sha1').update(lua).digest('hex'));
    }
  }

  async take(key: string, rule: RateRule): Promise<LimitDecision> {
    requireRateRule(rule);
    return this.withFallback(
      'take',
      async () => {
        const bucket = rateBucketKey(this.prefix, key);
        const args = [rule.tokens, rule.perMs, rule.burst];
        const [taken, waitMs] = (await this.bounded(this.script('take', bucket, args))) as number[];
        return taken === 1 ? { ok: true } : { ok: false, retryAfterMs: Number(waitMs) };
      },
      () => this.fallback.take(key, rule),
    );
  }

  async enter(key: string, cap: number): Promise<EnterAnswer> {
    requireConcurrencyCap(cap);
    return this.withFallback(
      'enter',
      async () => {
        const leases = concurrencyKey(this.prefix, key);
        const id = randomBytes(12).toString('hex');
        const admitted = this.script('enter', leases, [cap, id, this.leaseMs]);
        let reply: unknown;
        try {
          reply = await this.bounded(admitted);
        } catch (error) {
          // Answered after the bound, Redis may still have admitted it; this call fell back to
          // memory, so that lease is given back rather than left to expire.
          admitted.then((late) => late === 1 && this.remove(leases, id)).catch(() => undefined);
          throw error;
        }
        if (reply !== 1) return { ok: false, retryAfterMs: CONCURRENCY_RETRY_AFTER_MS };
        return { ok: true, slot: this.hold(leases, id) };
      },
      () => this.fallback.enter(key, cap),
    );
  }

  /** Stops renewing the slots held (their leases expire within `leaseMs`); the client stays open. */
  async close(): Promise<void> {
    for (const stop of [...this.renewals]) stop();
    await this.fallback.close();
  }

  /** A slot held in Redis: renewed every third of its lease until released. */
  private hold(leases: string, id: string): ConcurrencySlot {
    const renew = () => {
      this.bounded(this.script('renew', leases, [id, this.leaseMs]))
        // 0: the lease had expired (Redis away for longer than it); taking it back could pass
        // the cap, so the request finishes uncounted.
        .then((renewed) => renewed === 1 || stop())
        .catch(() => undefined);
    };
    const timer = setInterval(renew, Math.max(1, Math.floor(this.leaseMs / 3)));
    timer.unref();
    const stop = () => {
      clearInterval(timer);
      this.renewals.delete(stop);
    };
    this.renewals.add(stop);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        stop();
        this.remove(leases, id);
      },
    };
  }

  /** Gives a lease back, best effort: one Redis does not get back expires with its lease. */
  private remove(leases: string, id: string): void {
    this.bounded(this.redis.zrem(leases, id)).catch(() => undefined);
  }

  private async withFallback<T>(
    call: string,
    attempt: () => Promise<T>,
    fallback: () => Promise<T>,
  ): Promise<T> {
    if (this.clock.now() < this.skipRedisUntil) return fallback();
    try {
      return await attempt();
    } catch (error) {
      this.skipRedisUntil = this.clock.now() + this.retryRedisAfterMs;
      this.degraded(`${call} decided by this instance alone: ${(error as Error)?.message}`);
      return fallback();
    }
  }

  private degraded(reason: string): void {
    try {
      this.onDegraded(reason);
    } catch {
      // The caller's listener failing must not fail the request it was told about.
    }
  }

  /**
   * Settles once the client is connected. Commands sent while it connects would be refused at
   * once (no offline queue): the first requests after a start would be limited per instance.
   */
  private whenReady(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return (this.ready ??= new Promise<void>((resolve) => {
      this.redis.once('ready', () => {
        this.ready = undefined;
        resolve();
      });
    }));
  }

  /** Runs a script of limit-scripts.ts by its SHA-1, sending its text when Redis lacks it. */
  private async script(name: LimitScriptName, key: string, args: (string | number)[]) {
    const status = this.redis.status;
    if (DISCONNECTED.has(status)) throw new RedisUnavailable(`Redis is not connected (${status})`);
    if (status !== 'ready') await this.whenReady();
    try {
      return await this.redis.evalsha(this.shas.get(name) as string, 1, key, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return this.redis.eval(LIMIT_SCRIPTS[name], 1, key, ...args);
    }
  }

  /**
   * `pending`, or a rejection once `timeoutMs` passed without its answer; a call made while the
   * client still connects may wait for the connection as long as the cache's calls do.
   */
  private async bounded<T>(pending: Promise<T>): Promise<T> {
    const boundMs =
      this.redis.status === 'ready' ? this.timeoutMs : Math.max(this.timeoutMs, CONNECT_BOUND_MS);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new RedisUnavailable(`Redis did not answer within ${boundMs} ms`)),
        boundMs,
      );
    });
    try {
      return await Promise.race([pending, expired]);
    } finally {
      clearTimeout(timer);
      // The loser of the race must not become an unhandled rejection.
      pending.catch(() => undefined);
    }
  }
}

function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be positive`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`${name} must not be negative`);
  return value;
}

/**
 * A limit store on the Redis at `url`, over a connection of its own (set up as the cache's are),
 * which `close()` ends: for a server that holds no ioredis client of its own.
 */
export function connectRedisLimitStore(
  options: Omit<RedisLimitStoreOptions, 'redis'> & { url: string },
): LimitStore & { close(): Promise<void> } {
  const { url, ...rest } = options;
  const connection = new RedisConnection(url, rest.timeoutMs);
  const store = createRedisLimitStore({ ...rest, redis: connection.client });
  return {
    take: (key, rule) => store.take(key, rule),
    enter: (key, cap) => store.enter(key, cap),
    close: async () => {
      await store.close();
      await connection.close();
    },
  };
}
