/**
 * The sessions of one instance (docs/decisions.md 10.26): opened within their limits, found by
 * id, and ended with their connection rolled back, cleaned and given back.
 */
import { randomBytes } from 'node:crypto';
import { codedError, ErrorCodes, RequestError } from '../errors';
import type { AbortSignalLike } from '../ports/abort-signal';
import type { CancelHandle } from '../execution/cancel-handle';
import type { ExecutionContext } from '../execution/context';
import { sessionRefusal } from '../execution/transaction-pooling';
import type { Clock } from '../ports/clock';
import { poolIdOf, type ConnectionProvider, type ConnectionTarget } from '../ports/connections';
import type { Settled } from '../ports/settled';
import { runAsIdentity } from '../identity';
import type { SessionOpenRequest } from '../request';
import { PinnedConnection } from './pinned-connection';
import { Session, type SessionEnd } from './session';

export interface SessionLimits {
  /** Sessions open at once in this instance (MAX_SESSIONS). */
  maxSessions: number;
  /** Sessions open at once on one pool: below POOL_MAX, so requests always have a connection. */
  maxPerPool: number;
  /** Idle time after which a session ends (SESSION_IDLE_TIMEOUT_MS); a caller may ask for less. */
  idleTimeoutMs: number;
  /** Age at which a session ends, busy or not (SESSION_MAX_LIFETIME_MS). */
  maxLifetimeMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: 100,
  maxPerPool: 9,
  idleTimeoutMs: 60_000,
  maxLifetimeMs: 15 * 60_000,
};

/** Sessions open now, and how many were opened and ended (by why) since the start. */
export interface SessionStatistics {
  open: number;
  opened: number;
  ended: Record<SessionEnd, number>;
}

/** What closing a session did. */
export interface SessionClosed {
  /** A transaction was open (or failed) and was rolled back. */
  rolledBack: boolean;
}

/** Ended sessions whose reason is kept for requests that still name them. */
const ENDED_SESSIONS_REMEMBERED = 1000;

/** 128 random bits, URL-safe: the id is the only credential a session's requests present. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** How logs name a session: enough to tell sessions apart, never enough to use one. */
export function sessionIdForLogs(id: string): string {
  return `${id.slice(0, 6)}…`;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  /** The timer that ends each session: idle time or lifetime, whichever comes first. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /**
   * Why the sessions that ended lately ended, so that a request naming one is told (a restart
   * ends a session between two of its requests). Bounded: the oldest are forgotten.
   */
  private readonly endedRecently = new Map<string, SessionEnd>();
  /** Sessions ending, with the promise of their end, so that every caller can await it. */
  private readonly endings = new Map<string, Promise<SessionClosed>>();
  /** Sessions open or being opened, by pool id. */
  private readonly perPool = new Map<string, number>();
  /** Sessions being opened: counted against the limits while their connection is awaited. */
  private opening = 0;
  /** Ends the waits of sessions being opened, at shutdown. */
  private readonly openingAborts = new Set<AbortController>();
  private shuttingDown = false;
  private opened = 0;
  private readonly ended: Record<SessionEnd, number> = {
    closed: 0,
    idle: 0,
    lifetime: 0,
    broken: 0,
    shutdown: 0,
  };

  constructor(
    private readonly connections: Pick<ConnectionProvider, 'acquire'>,
    readonly limits: SessionLimits,
    private readonly clock: Clock,
    private readonly newId: () => string = newSessionId,
  ) {}

  statistics(): SessionStatistics {
    return { open: this.sessions.size, opened: this.opened, ended: { ...this.ended } };
  }

  /**
   * Opens a session on `target` (already checked by the target policy), or says why not: a limit
   * (SESSION_LIMIT), or the pool's own failure to lend a connection.
   */
  async open(
    target: ConnectionTarget,
    requested: ConnectionTarget,
    idleTimeoutMs: number = this.limits.idleTimeoutMs,
    /** The caller went away: no session is opened for nobody. */
    signal?: AbortSignalLike,
    /** A cancel by request id (docs/decisions.md 10.26) gives up the wait as well. */
    cancel?: CancelHandle,
    /**
     * Who the session's statements run as, set on its connection before it is handed out, and how
     * its requests are let in.
     */
    credentials: Pick<SessionOpenRequest, 'identity' | 'admission'> = {},
  ): Promise<Settled<Session>> {
    const { identity, admission } = credentials;
    const poolId = poolIdOf(target);
    const refusal = this.limitRefusal(poolId);
    if (refusal) return { ok: false, error: refusal };
    this.opening += 1;
    this.perPool.set(poolId, (this.perPool.get(poolId) ?? 0) + 1);
    // The wait ends when the caller goes away or cancels (`signal`), or at shutdown.
    const wait = new AbortController();
    const stopWaiting = () => wait.abort();
    if (signal?.aborted) wait.abort();
    else signal?.addEventListener('abort', stopWaiting, { once: true });
    this.openingAborts.add(wait);
    cancel?.attach({ cancel: stopWaiting, cancelsSettled: () => undefined });
    let session: Session | undefined;
    try {
      const acquired = await this.connections.acquire(target, { signal: wait.signal });
      // Behind a transaction pooler a session cannot work (docs/decisions.md 10.33).
      const refusal = acquired.ok ? await sessionRefusal(acquired.value) : undefined;
      const gaveUp = this.shuttingDown || wait.signal.aborted;
      if (gaveUp && acquired.ok) acquired.value.release({ resetSession: true });
      if (gaveUp)
        return { ok: false, error: this.shuttingDown ? shuttingDownError() : callerGone() };
      if (!acquired.ok) return acquired;
      if (refusal) {
        acquired.value.release();
        return { ok: false, error: refusal };
      }
      const setupFailure = identity ? await runAsIdentity(acquired.value, identity) : undefined;
      if (setupFailure) {
        acquired.value.release({ resetSession: true });
        return { ok: false, error: setupFailure };
      }
      const id = this.newId();
      const pinned = new PinnedConnection(acquired.value, () => void this.end(id, 'broken'));
      session = new Session({
        id,
        target,
        requested,
        ...(identity ? { identity } : {}),
        ...(admission ? { admission } : {}),
        connection: pinned,
        idleTimeoutMs,
        openedAt: this.clock.date().getTime(),
        maxLifetimeMs: this.limits.maxLifetimeMs,
      });
      this.sessions.set(id, session);
      this.scheduleExpiry(session);
      this.opened += 1;
      return { ok: true, value: session };
    } finally {
      this.opening -= 1;
      this.openingAborts.delete(wait);
      signal?.removeEventListener('abort', stopWaiting);
      if (!session) this.releasePoolSlot(poolId);
    }
  }

  /** Why the session with this id ended, if it did lately (or is ending). */
  endReasonOf(id: string): SessionEnd | undefined {
    return this.sessions.get(id)?.endedBy ?? this.endedRecently.get(id);
  }

  /** Whether this instance holds the session, open or ending, or remembers why it ended. */
  knows(id: string): boolean {
    return this.sessions.has(id) || this.endedRecently.has(id);
  }

  /** The open session with this id; undefined for an unknown, ended or ending one. */
  find(id: string): Session | undefined {
    const session = this.sessions.get(id);
    return session && !session.ending ? session : undefined;
  }

  /**
   * Runs `work` as the session's one request; undefined when another request runs. The idle clock
   * stops meanwhile and starts again after; a session that broke or was ended meanwhile is closed.
   */
  async run<T>(
    session: Session,
    work: (attach: (context: ExecutionContext) => void) => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    const claim = session.begin();
    if (!claim) return undefined;
    this.scheduleExpiry(session);
    try {
      return { value: await work(claim.attach) };
    } finally {
      claim.finish(this.clock.date().getTime());
      if (session.connection.broken) void this.end(session.id, 'broken');
      else if (!session.ending) this.scheduleExpiry(session);
    }
  }

  /**
   * Ends a session: what runs is cancelled and awaited, then rolled back, cleaned and given back.
   * Undefined when no such session is open; one already ending gives that end's promise.
   */
  end(id: string, reason: SessionEnd): Promise<SessionClosed> | undefined {
    const ending = this.endings.get(id);
    if (ending) return ending;
    const session = this.sessions.get(id);
    if (!session || !session.markEnding(reason)) return undefined;
    const ended = this.finish(session, reason).finally(() => this.endings.delete(id));
    this.endings.set(id, ended);
    return ended;
  }

  private async finish(session: Session, reason: SessionEnd): Promise<SessionClosed> {
    session.admission?.ended();
    clearTimeout(this.timers.get(session.id));
    this.timers.delete(session.id);
    // A broken connection ends the session from inside its request, whose own failure says why.
    if (reason !== 'broken') session.cancelRunning();
    await session.idle();
    // A broken connection's open transaction was rolled back by the server as it ended.
    const rolledBack = session.connection.transactionStatus() !== 'idle';
    session.connection.giveBack();
    this.sessions.delete(session.id);
    this.releasePoolSlot(poolIdOf(session.target));
    this.ended[reason] += 1;
    this.endedRecently.set(session.id, reason);
    if (this.endedRecently.size > ENDED_SESSIONS_REMEMBERED) {
      this.endedRecently.delete(this.endedRecently.keys().next().value as string);
    }
    return { rolledBack };
  }

  /** Ends every session (shutdown): their transactions are rolled back. */
  async closeAll(): Promise<void> {
    this.shuttingDown = true;
    for (const wait of this.openingAborts) wait.abort();
    // Those already ending (closed, expired) are awaited too.
    await Promise.all([...this.sessions.keys()].map((id) => this.end(id, 'shutdown')));
  }

  /**
   * Ends the session when it has been idle too long or reaches its lifetime, whichever comes first;
   * while a request runs only the lifetime counts.
   */
  private scheduleExpiry(session: Session): void {
    clearTimeout(this.timers.get(session.id));
    const at = session.busy ? session.lifetimeEndsAt : session.expiresAt;
    const reason: SessionEnd = at === session.lifetimeEndsAt ? 'lifetime' : 'idle';
    const timer = setTimeout(
      () => void this.end(session.id, reason),
      Math.max(0, at - this.clock.date().getTime()),
    );
    timer.unref();
    this.timers.set(session.id, timer);
  }

  private limitRefusal(poolId: string): RequestError | undefined {
    if (this.shuttingDown) return shuttingDownError();
    if (this.limits.maxSessions <= 0) {
      return codedError(
        ErrorCodes.SESSIONS_OFF,
        'Sessions are off on this instance (MAX_SESSIONS is 0)',
      );
    }
    if (this.limits.maxPerPool <= 0) {
      return codedError(
        ErrorCodes.SESSIONS_OFF,
        'Sessions are off on this instance: a pool of one connection (POOL_MAX 1) has none to lend to sessions',
      );
    }
    if (this.sessions.size + this.opening >= this.limits.maxSessions) {
      return codedError(
        ErrorCodes.SESSION_LIMIT,
        `${this.limits.maxSessions} sessions are open (MAX_SESSIONS); close one or retry later`,
      );
    }
    if ((this.perPool.get(poolId) ?? 0) >= this.limits.maxPerPool) {
      return codedError(
        ErrorCodes.SESSION_LIMIT,
        `${this.limits.maxPerPool} sessions hold connections of this pool, as many as it may lend to sessions (POOL_MAX - 1); close one or retry later`,
      );
    }
    return undefined;
  }

  private releasePoolSlot(poolId: string): void {
    const count = (this.perPool.get(poolId) ?? 1) - 1;
    if (count <= 0) this.perPool.delete(poolId);
    else this.perPool.set(poolId, count);
  }
}

function callerGone(): RequestError {
  return new RequestError(
    ErrorCodes.REQUEST_ABORTED,
    'The caller went away before the session opened',
  );
}

function shuttingDownError(): RequestError {
  return codedError(ErrorCodes.SHUTTING_DOWN, 'The service is shutting down');
}
