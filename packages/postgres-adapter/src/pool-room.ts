/**
 * Requests for a new target's pool while POOL_TARGETS_MAX pools all lend connections
 * (docs/decisions.md 10.43): each waits, in order, up to POOL_WAIT_TIMEOUT_MS for one to free.
 */
import type { AbortSignalLike } from '@sqlgate/core';

/** Why a wait ended: a pool may be closed now, the time ran out, or the request was aborted. */
export type RoomWait = 'room' | 'timeout' | 'aborted';

export class PoolRoom {
  /** Wakers of the waiting requests, oldest first. */
  private readonly waiters = new Set<() => void>();

  /** Resolves when a pool came free, after `timeoutMs`, or when `signal` aborts. */
  wait(timeoutMs: number, signal?: AbortSignalLike): Promise<RoomWait> {
    if (signal?.aborted) return Promise.resolve('aborted');
    if (timeoutMs <= 0) return Promise.resolve('timeout');
    return new Promise((resolve) => {
      const end = (outcome: RoomWait): void => {
        this.waiters.delete(wake);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const wake = (): void => end('room');
      const onAbort = (): void => end('aborted');
      const timer = setTimeout(() => end('timeout'), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(wake);
    });
  }

  /** A pool has nothing lent any more (or was closed): the oldest waiting request tries again. */
  freed(): void {
    const [first] = this.waiters;
    first?.();
  }

  /** Every waiting request tries again (the registry is closing: each is then refused). */
  freeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
