/**
 * One session (docs/decisions.md 10.26): a pooled connection pinned to a caller across requests,
 * with the clocks that end it: idle time between requests, and a lifetime it never outlives.
 */
import { widerExtent, writeExtentOf, type WriteExtent } from '../cache';
import type { ParsedStatement } from '../parser/types';
import { CancelHandle } from '../execution/cancel-handle';
import type { ExecutionContext } from '../execution/context';
import type { ConnectionTarget, TransactionStatus } from '../ports/connections';
import type { RequestIdentity, SessionAdmission } from '../request';
import type { PinnedConnection } from './pinned-connection';

/** Why a session ended: the caller closed it, a clock did, its connection broke, or shutdown. */
export type SessionEnd = 'closed' | 'idle' | 'lifetime' | 'broken' | 'shutdown';

/** The request running in a session; one at a time. */
interface SessionRequest {
  cancel: CancelHandle;
  /** Settles when the request has finished with the connection. */
  finished: Promise<void>;
}

/** What a session is opened with. */
export interface SessionOpening {
  id: string;
  /** The target as checked by the target policy: what every request of the session runs on. */
  target: ConnectionTarget;
  /** The target as the caller sent it, to recognise the same credentials (cancel). */
  requested: ConnectionTarget;
  /** Who its statements run as, set when it opened (docs/decisions.md 12). */
  identity?: RequestIdentity;
  /** How its requests are let in, when credentials opened it. */
  admission?: SessionAdmission;
  connection: PinnedConnection;
  idleTimeoutMs: number;
  /** Wall-clock milliseconds. */
  openedAt: number;
  maxLifetimeMs: number;
}

export class Session {
  /** Wall-clock milliseconds of the last activity (the end of its last request, or its opening). */
  private lastActiveAt: number;
  private running: SessionRequest | undefined;
  /** Set when the session was told to end: no new request is accepted. */
  private endReason: SessionEnd | undefined;
  /**
   * How far the writes the session sent since its transaction began may reach. The result cache is
   * invalidated for them when they commit, which is only known once the session is idle again.
   */
  private pendingWrite: WriteExtent = 'none';

  readonly id: string;
  /** The target as checked by the target policy: what every request of the session runs on. */
  readonly target: ConnectionTarget;
  /** The target as the caller sent it, to recognise the same credentials (cancel). */
  readonly requested: ConnectionTarget;
  /** Who its statements run as: every request of the session is held to it. */
  readonly identity: RequestIdentity | undefined;
  readonly admission: SessionAdmission | undefined;
  readonly connection: PinnedConnection;
  readonly idleTimeoutMs: number;
  readonly openedAt: number;
  private readonly maxLifetimeMs: number;

  constructor(opened: SessionOpening) {
    this.id = opened.id;
    this.target = opened.target;
    this.requested = opened.requested;
    this.identity = opened.identity;
    this.admission = opened.admission;
    this.connection = opened.connection;
    this.idleTimeoutMs = opened.idleTimeoutMs;
    this.openedAt = opened.openedAt;
    this.maxLifetimeMs = opened.maxLifetimeMs;
    this.lastActiveAt = opened.openedAt;
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

  /** Why the session ended (or is ending); undefined while it is open. */
  get endedBy(): SessionEnd | undefined {
    return this.endReason;
  }

  /** Marks the session as ending; false when it already was. */
  markEnding(reason: SessionEnd): boolean {
    if (this.endReason !== undefined) return false;
    this.endReason = reason;
    return true;
  }

  /** Claims the session for one request; undefined when another one runs or it is ending. */
  begin(): { attach(context: ExecutionContext): void; finish(now: number): void } | undefined {
    if (this.running || this.endReason !== undefined) return undefined;
    let finish!: () => void;
    const cancel = new CancelHandle();
    this.running = { cancel, finished: new Promise<void>((done) => (finish = done)) };
    return {
      // A cancel, close or expiry that came while the request was parsing reaches it here.
      attach: (context) => cancel.attach(context),
      finish: (now) => {
        this.lastActiveAt = now;
        this.running = undefined;
        finish();
      },
    };
  }

  /**
   * How far to invalidate the result cache after a request that sent `statements` from state
   * `before`: writes since the last invalidation once one may have committed; nothing while a
   * request ran wholly inside an open transaction, invisible to others.
   */
  writesToInvalidate(
    statements: readonly ParsedStatement[],
    before: TransactionStatus,
  ): WriteExtent {
    const extent = widerExtent(this.pendingWrite, writeExtentOf(statements));
    const over = this.connection.broken || this.connection.transactionStatus() === 'idle';
    const crossed =
      over ||
      before === 'idle' ||
      statements.some((statement) => statement.statementClass === 'transaction-control');
    // Still in a transaction: its writes so far (some perhaps already invalidated) commit later.
    this.pendingWrite = over ? 'none' : extent;
    return crossed ? extent : 'none';
  }

  /** Cancels what runs now; false when nothing did. */
  cancelRunning(): boolean {
    const running = this.running;
    if (!running) return false;
    running.cancel.cancel();
    return true;
  }

  /**
   * Resolves once no request runs in the session and the CancelRequests sent for the last one
   * have reached the server, so that none can stop a statement of the connection's next user.
   */
  async idle(): Promise<void> {
    const running = this.running;
    if (!running) return;
    await running.finished;
    await running.cancel.settled();
  }
}
