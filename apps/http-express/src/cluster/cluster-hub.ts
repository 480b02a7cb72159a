/**
 * The primary's answers to its workers (docs/decisions.md 10.28): it relays invalidations and
 * clears, holds the sums of the counters, gathers statistics from every worker, and finds the
 * worker a session or a cancel is for (10.35). It starts and
 * stops no process (worker-supervisor.ts does); a worker that does not acknowledge a relay is
 * handed to `evict`, which kills it and waits for its exit.
 */
import { QueryStatistics } from '@sqlgate/core';
import type { Logger } from 'pino';
import type { NoticeHandlers, RequestHandlers } from './ipc-channel';
import { aggregateMetrics } from './aggregate-metrics';
import type { CacheEntryOnTheWire } from './protocol';
import { RequestRouter } from './request-router';
import { SharedReading } from './shared-reading';
import { mergePoolStats, newestEntries } from './merge-statistics';
import type { WorkerNotices, WorkerRequests } from './protocol';
import type { ChannelToWorker } from './worker-channel';

/**
 * How long a worker has to apply a relayed invalidation or clear. One that takes longer is frozen
 * or stuck, and killed: it may hold entries the write invalidated and must never serve them.
 */
const ACKNOWLEDGE_TIMEOUT_MS = 1_000;

/** How long a worker has to answer for statistics; one that does not is left out of them. */
const GATHER_TIMEOUT_MS = 500;
/**
 * How long one gathering of statistics (cache size and entries, pools, metrics) answers every
 * asker: a reader sees figures at most this old, and a flood of reads cannot keep the workers busy.
 */
const READING_REUSE_MS = 1000;

/** One worker as the hub sees it. */
export interface WorkerLink {
  readonly pid: number;
  readonly channel: ChannelToWorker;
}

export interface ClusterHubOptions {
  logger: Logger;
  /** How long a session request forwarded to its worker may run (docs/decisions.md 10.35). */
  sessionRequestTimeoutMs: number;
  /** Kills a worker that did not acknowledge; resolves once it has exited (within a bound). */
  evict(link: WorkerLink): Promise<void>;
  /** A worker's server listens. */
  listening(link: WorkerLink, url: string): void;
}

export class ClusterHub {
  /**
   * Workers that joined: they take relays and answer statistics. A worker joins before it listens,
   * so a relay it is not sent was handled before it could take its first request.
   */
  private readonly members = new Set<WorkerLink>();
  private readonly sums = new QueryStatistics();
  /** Pool statistics and metrics are gathered at most once per READING_REUSE_MS, however often asked. */
  private readonly poolStats = new SharedReading(async () => {
    const pools = await this.gather((member) =>
      member.channel.request('localPoolStats', {}, GATHER_TIMEOUT_MS),
    );
    return { pools: mergePoolStats(pools.map((each) => each.pools)) };
  }, READING_REUSE_MS);
  private readonly cacheSize = new SharedReading(async () => {
    const sizes = await this.gather((member) =>
      member.channel.request('localCacheSize', {}, GATHER_TIMEOUT_MS),
    );
    return { entries: sizes.reduce((sum, size) => sum + size.entries, 0) };
  }, READING_REUSE_MS);
  /** By limit: GET /api/stats/cache always asks for 10, so there is one. */
  private readonly recent = new Map<number, SharedReading<{ entries: CacheEntryOnTheWire[] }>>();
  private readonly metrics = new SharedReading(async () => {
    const metrics = await this.gather((member) =>
      member.channel.request('localMetrics', {}, GATHER_TIMEOUT_MS),
    );
    return { exposition: await aggregateMetrics(metrics.map((each) => each.metrics)) };
  }, READING_REUSE_MS);

  /** Session requests and cancels that reach one worker for another. */
  private readonly router: RequestRouter;

  constructor(private readonly options: ClusterHubOptions) {
    this.router = new RequestRouter(
      () => Array.from(this.members),
      options.sessionRequestTimeoutMs,
    );
  }

  /** The answers to one worker's requests. */
  handlersFor(link: WorkerLink): RequestHandlers<WorkerRequests> {
    return {
      join: () => {
        this.members.add(link);
        return {};
      },
      invalidate: async (invalidation) => {
        await this.relay(link, (target) =>
          target.channel.request('applyInvalidation', invalidation, ACKNOWLEDGE_TIMEOUT_MS),
        );
        return {};
      },
      clearCaches: async () => {
        await this.relay(link, (target) =>
          target.channel.request('clearLocalCache', {}, ACKNOWLEDGE_TIMEOUT_MS),
        );
        // A read of the statistics after the clear was answered must show it.
        this.cacheSize.forget();
        this.recent.clear();
        return {};
      },
      counterTotals: ({ pending }) => {
        this.sums.add(pending);
        return this.sums.totals();
      },
      cacheSize: () => this.cacheSize.get(),
      recentEntries: ({ limit }) => this.recentReading(limit).get(),
      poolStats: () => this.poolStats.get(),
      metrics: () => this.metrics.get(),
      sessionRequest: (request) => this.router.sessionRequest(link, request),
      cancelRequest: ({ requestId, body, client }) =>
        this.router.cancelRequest(requestId, body, client),
    };
  }

  /** What one worker's notices do. */
  noticeHandlersFor(link: WorkerLink): NoticeHandlers<WorkerNotices> {
    return {
      counters: (delta) => this.sums.add(delta),
      listening: ({ url }) => this.options.listening(link, url),
      callerGone: ({ forwardId }) => this.router.callerGone(link, forwardId),
    };
  }

  /** The worker is gone or going: it takes no more relays. */
  leave(link: WorkerLink): void {
    this.members.delete(link);
    this.router.workerGone(link);
  }

  /**
   * Every worker forgets its whole cache: a worker died, and a write it committed may not have
   * been relayed. Resolves as a relay does.
   */
  forgetEverywhere(): Promise<void> {
    return this.relay(undefined, (target) =>
      target.channel.request('clearLocalCache', {}, ACKNOWLEDGE_TIMEOUT_MS),
    );
  }

  /**
   * Sends `apply` to every member but `origin`, and resolves once each has acknowledged or, having
   * not, has been evicted (killed and exited). A worker that joins meanwhile is not waited for: it
   * listens only after its join was answered, which is after this relay began, so after the write
   * it reports had committed.
   */
  private async relay(
    origin: WorkerLink | undefined,
    apply: (target: WorkerLink) => Promise<unknown>,
  ): Promise<void> {
    const targets = Array.from(this.members).filter((member) => member !== origin);
    await Promise.all(
      targets.map(async (target) => {
        try {
          await apply(target);
        } catch (error) {
          // Not acknowledged (too slow, gone, or failed to apply): it must never serve again.
          this.members.delete(target);
          if (!target.channel.closed) {
            this.options.logger.error(
              { workerPid: target.pid, err: error },
              'worker did not acknowledge a cache invalidation or clear; killing it',
            );
          }
          await this.options.evict(target);
        }
      }),
    );
  }

  private recentReading(limit: number): SharedReading<{ entries: CacheEntryOnTheWire[] }> {
    let reading = this.recent.get(limit);
    if (reading === undefined) {
      reading = new SharedReading(async () => {
        const recent = await this.gather((member) =>
          member.channel.request('localRecentEntries', { limit }, GATHER_TIMEOUT_MS),
        );
        return {
          entries: newestEntries(
            recent.map((each) => each.entries),
            limit,
          ),
        };
      }, READING_REUSE_MS);
      // A caller asking with ever new limits costs one reading each, and forgets the others.
      if (this.recent.size >= 4) this.recent.clear();
      this.recent.set(limit, reading);
    }
    return reading;
  }

  /** Asks every member; those that fail or are too slow are left out. */
  private async gather<T>(ask: (member: WorkerLink) => Promise<T>): Promise<T[]> {
    const answers = await Promise.allSettled(Array.from(this.members).map(ask));
    return answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
  }
}
