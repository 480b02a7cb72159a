/**
 * One session (docs/decisions.md 10.26): a pooled connection pinned to a caller across requests,
 * with the clocks that end it: idle time between requests, and a lifetime it never outlives.
 */
import { widerExtent, writeExtentOf, type WriteExtent } from '../cache';
import type { ParsedStatement } from '../parser/types';
import type { ExecutionContext } from '../execution/context';
import type { ConnectionTarget } from '../ports/connections';
import type { PinnedConnection } from './pinned-connection';

/** Why a session ended: the caller closed it, a clock did, its connection broke, or shutdown. */
export type SessionEnd = 'closed' | 'idle' | 'lifetime' | 'broken' | 'shutdown';

/** The request running in a session; one at a time. */
interface RunningRequest {
  /** Set once the request has a context (it may still be parsing before). */
  context?: ExecutionContext;
  /** Settles when the request has finished with the connection. */
  finished: Promise<void>;
  /** A cancel that came before the request had a context. */
  cancelled?: boolean;
}

export class Session {
  /** Wall-clock milliseconds of the last activity (the end of its last request, or its opening). */
  private lastActiveAt: number;
  private running: RunningRequest | undefined;
  /** Set when the session was told to end: no new request is accepted. */
  private endReason: SessionEnd | undefined;
  /**
   * How far the writes the session sent since its transaction began may reach. The result cache is
   * invalidated for them when they commit, which is only known once the session is idle again.
   */
  private pendingWrite: WriteExtent = 'none';

  constructor(
    readonly id: string,
    /** The target as checked by the target policy: what every request of the session runs on. */
    readonly target: ConnectionTarget,
    /** The target as the caller sent it, to recognise the same credentials (cancel). */
    readonly requested: ConnectionTarget,
    readonly connection: PinnedConnection,
    readonly idleTimeoutMs: number,
    readonly openedAt: number,
    private readonly maxLifetimeMs: number,
  ) {
    this.lastActiveAt = openedAt;
  }

  /** Wall-clock milliseconds after which the session ends unless a request runs before. */
  get expiresAt(): number {
    return Math.min(this.lastActiveAt + this.idleTimeoutMs, this.lifetimeEndsAt);
  }

  get lifetimeEndsAt(): number {
    return this.openedAt + this.maxLifetimeMs;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get ending(): boolean {
    return this.endReason !== undefined;
  }

  /** Marks the session as ending; false when it already was. */
  markEnding(reason: SessionEnd): boolean {
    if (this.endReason !== undefined) return false;
    this.endReason = reason;
    return true;
  }

  /** Claims the session for one request; undefined when another one runs. */
  begin(): { attach(context: ExecutionContext): void; finish(now: number): void } | undefined {
    if (this.running) return undefined;
    let finish!: () => void;
    const running: RunningRequest = { finished: new Promise<void>((done) => (finish = done)) };
    this.running = running;
    return {
      attach: (context) => {
        running.context = context;
        // A cancel, close or shutdown that came while the request was parsing.
        if (running.cancelled || this.endReason !== undefined) context.cancel();
      },
      finish: (now) => {
        this.lastActiveAt = now;
        this.running = undefined;
        finish();
      },
    };
  }

  /**
   * After a request that sent `statements`: how far to invalidate the result cache now. Writes in an
   * open transaction wait for its end (other callers cannot see them before); once the session is
   * idle again (committed, rolled back, or autocommit) or its connection broke (a COMMIT's fate
   * unknown), every write it sent since counts.
   */
  writesToInvalidate(statements: readonly ParsedStatement[]): WriteExtent {
    const extent = widerExtent(this.pendingWrite, writeExtentOf(statements));
    const over = this.connection.broken || this.connection.transactionStatus() === 'idle';
    this.pendingWrite = over ? 'none' : extent;
    return over ? extent : 'none';
  }

  /** Cancels what runs now; false when nothing did. */
  cancelRunning(): boolean {
    const running = this.running;
    if (!running) return false;
    running.cancelled = true;
    running.context?.cancel();
    return true;
  }

  /** Resolves once no request runs in the session. */
  idle(): Promise<void> {
    return this.running?.finished ?? Promise.resolve();
  }
}
