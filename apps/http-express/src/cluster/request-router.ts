/**
 * The primary's part in requests that reach one worker for another (docs/decisions.md 10.35). A
 * session's request goes to the worker that holds the session, which the primary finds by asking
 * the others; a cancel by request id is tried in every worker, within its client's limit of
 * failures (10.34), counted here for all workers together. The primary keeps no directory of
 * sessions or requests: nothing to keep in step as they open and end, or when a worker dies.
 */
import { LimitedCancels, type CancelVerdict } from '../cancel-limit';
import type { SessionAnswer, SessionRequest } from './protocol';
import type { WorkerLink } from './cluster-hub';

/** How long a worker has to say whether it holds a session, or to try a cancel. */
const LOOKUP_TIMEOUT_MS = 500;

/** A session request under way in another worker than the one that received it. */
interface Forward {
  origin: WorkerLink;
  /** The receiving worker's id of it. */
  originId: number;
  /** The worker running it, once found. */
  owner?: WorkerLink;
  /** Its caller went away while the worker holding the session was looked for. */
  callerGone?: true;
}

export class RequestRouter {
  private nextForwardId = 1;
  /** By the primary's own id, which the owner knows the request by. */
  private readonly forwards = new Map<number, Forward>();
  private readonly cancels = new LimitedCancels((requestId, body) =>
    this.cancelEverywhere(requestId, body),
  );

  constructor(
    /** The workers that take requests now. */
    private readonly members: () => readonly WorkerLink[],
    /** How long a session request may run in its worker (SESSION_MAX_LIFETIME_MS and a margin). */
    private readonly sessionRequestTimeoutMs: number,
  ) {}

  /** Runs `request` in the worker holding its session; null when no other worker holds it. */
  async sessionRequest(
    origin: WorkerLink,
    request: SessionRequest,
  ): Promise<{ answer: SessionAnswer | null }> {
    const forwardId = this.nextForwardId++;
    const forward: Forward = { origin, originId: request.forwardId };
    this.forwards.set(forwardId, forward);
    try {
      forward.owner = await this.holderOf(request.sessionId, origin);
      // Nobody reads the answer of a caller that went away meanwhile: nothing is run for it.
      if (forward.owner === undefined || forward.callerGone) return { answer: null };
      const answer = await forward.owner.channel.request(
        'runSessionRequest',
        { ...request, forwardId },
        this.sessionRequestTimeoutMs,
      );
      return { answer };
    } finally {
      this.forwards.delete(forwardId);
    }
  }

  /** The caller of a request `origin` forwarded went away: the worker running it is told. */
  callerGone(origin: WorkerLink, originId: number): void {
    for (const [forwardId, forward] of this.forwards) {
      if (forward.origin === origin && forward.originId === originId) {
        this.tellCallerGone(forwardId, forward);
      }
    }
  }

  /**
   * A worker is gone: the callers of the requests it forwarded went with its sockets. Requests it
   * was running for others fail by themselves, as its channel closes.
   */
  workerGone(link: WorkerLink): void {
    for (const [forwardId, forward] of this.forwards) {
      if (forward.origin === link) this.tellCallerGone(forwardId, forward);
    }
  }

  private tellCallerGone(forwardId: number, forward: Forward): void {
    if (forward.owner === undefined) forward.callerGone = true;
    else void forward.owner.channel.notify('callerGone', { forwardId });
  }

  cancelRequest(requestId: string, body: unknown, client: string): Promise<CancelVerdict> {
    return this.cancels.cancel(requestId, body, client);
  }

  /** Tries the cancel in every worker; true when any cancelled something. */
  private async cancelEverywhere(requestId: string, body: unknown): Promise<boolean> {
    const tried = await Promise.allSettled(
      this.members().map((member) =>
        member.channel.request('cancelLocal', { requestId, body }, LOOKUP_TIMEOUT_MS),
      ),
    );
    return tried.some((each) => each.status === 'fulfilled' && each.value.cancelled);
  }

  /** The worker, other than `origin`, that holds the session: the first to say so. */
  private holderOf(sessionId: string, origin: WorkerLink): Promise<WorkerLink | undefined> {
    const others = this.members().filter((member) => member !== origin);
    return new Promise((resolve) => {
      let pending = others.length;
      if (pending === 0) resolve(undefined);
      for (const member of others) {
        member.channel.request('holdsSession', { sessionId }, LOOKUP_TIMEOUT_MS).then(
          ({ holds }) => {
            if (holds) resolve(member);
            if (--pending === 0) resolve(undefined);
          },
          // One that does not answer is left out, as from the statistics.
          () => {
            if (--pending === 0) resolve(undefined);
          },
        );
      }
    });
  }
}
