/**
 * Invalidations the cache store did not confirm, retried until one succeeds (docs/decisions.md
 * 10.27); meanwhile this instance neither serves nor keeps the place's entries. Coalesced per
 * place; a success clears a pending one only if it began after the failed one began.
 */

import type { InvalidationScope } from '../ports/cache-store';

/** Asks the store to invalidate `place`; resolves to the entries removed. */
export type InvalidationAttempt = (place: InvalidationScope) => Promise<number>;

export const RETRY_INTERVAL_MS = 100;

/** What the answer to a write says while the store has not confirmed its invalidation. */
export const UNCONFIRMED_INVALIDATION_WARNING =
  'The shared result cache did not confirm that it dropped what this request may have changed (its store failed or did not answer in time): until it does, other sqlgate instances sharing it may still answer reads with the rows as they were before. This instance serves none of them, and sends the invalidation again every 100 ms.';

/**
 * What the answer to a write says when the cache could not learn which database it reached (the
 * server did not say which it is, docs/decisions.md 10.20): nothing could be dropped for it.
 */
export const UNSCOPED_INVALIDATION_WARNING =
  'The result cache could not learn which database this request reached (the server did not tell it), so it could not drop what this request may have changed: reads of this database cached through other logins or other addresses may answer with the rows as they were before until they expire.';

interface Pending {
  place: InvalidationScope;
  /** When the latest failed attempt began (in attempts): only an attempt begun later clears it. */
  begun: number;
}

export class PendingInvalidations {
  private readonly pending = new Map<string, Pending>();
  /** Counts attempts begun, so that each knows which failures it postdates. */
  private attempts = 0;
  private timer: NodeJS.Timeout | undefined;
  private retrying = false;
  private stopped = false;

  constructor(private readonly attempt: InvalidationAttempt) {}

  /** Runs an invalidation; on failure it stays pending (retried) and the failure is rethrown. */
  async run(place: InvalidationScope): Promise<number> {
    const begun = ++this.attempts;
    try {
      const result = await this.attempt(place);
      this.succeeded(place, begun);
      return result;
    } catch (error) {
      this.failed(place, begun);
      throw error;
    }
  }

  /** Whether this database, or its server, has an invalidation the store has not confirmed. */
  covers(database: string, server: string): boolean {
    return (
      this.pending.size > 0 &&
      (this.pending.has(placeKey({ scope: database })) || this.pending.has(placeKey({ server })))
    );
  }

  get size(): number {
    return this.pending.size;
  }

  /** Tries every pending invalidation once, now; resolves when all attempts have settled. */
  async retryAll(): Promise<void> {
    await Promise.all(
      [...this.pending.values()].map(({ place }) => this.run(place).catch(() => undefined)),
    );
  }

  /** No more background retries (closing). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private failed(place: InvalidationScope, begun: number): void {
    const latest = Math.max(begun, this.pending.get(placeKey(place))?.begun ?? 0);
    this.pending.set(placeKey(place), { place, begun: latest });
    this.schedule();
  }

  private succeeded(place: InvalidationScope, begun: number): void {
    const waiting = this.pending.get(placeKey(place));
    if (waiting && begun > waiting.begun) this.pending.delete(placeKey(place));
  }

  private schedule(): void {
    if (this.timer || this.retrying || this.stopped || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.retrying = true;
      void this.retryAll().finally(() => {
        this.retrying = false;
        this.schedule();
      });
    }, RETRY_INTERVAL_MS);
    // A pending invalidation must not keep the process alive: it is lost with the process anyway.
    this.timer.unref();
  }
}

/** One text per database or server, for maps and logs keyed by place. */
export function placeKey(place: InvalidationScope): string {
  return 'server' in place ? `server\u0000${place.server}` : `database\u0000${place.scope}`;
}
