/**
 * The requests running in this instance, by request id, so that a caller can cancel one from
 * another HTTP request (docs/decisions.md 10.26). Only a caller presenting the login the request
 * runs with may cancel it, and a cancel that cancels nothing says nothing of why (10.34): a
 * request running for another login, an id nothing runs under, and a request no longer
 * cancellable by id look alike, in the answer and in the work done to reach it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConnectionTarget } from '../ports/connections';
import { CancelHandle } from './cancel-handle';

/**
 * Cancels naming a running request's id that cancelled nothing, after which the request can no
 * longer be cancelled by id (its caller can still go away, which cancels it, 10.7): a guesser has
 * this many tries at its password, however many addresses it sends them from.
 */
export const FAILED_CANCELS_PER_REQUEST = 5;

/** One running request, cancellable once its target is known (only then can a login match). */
export class RunningRequest extends CancelHandle {
  private login: { target: ConnectionTarget; digest?: Buffer } | undefined;
  /** Cancels by this request's id that cancelled nothing. */
  failedCancels = 0;

  get target(): ConnectionTarget | undefined {
    return this.login?.target;
  }

  set target(target: ConnectionTarget | undefined) {
    this.login = target && { target };
  }

  /** The digest of the login it runs for, made at the first cancel that names it. */
  loginDigest(): Buffer | undefined {
    if (this.login) this.login.digest ??= loginDigestOf(this.login.target);
    return this.login?.digest;
  }
}

/** Compared with a cancel's login when no request runs under its id, so that both cost alike. */
const NO_LOGIN = createHash('sha256').update('no request runs under this id').digest();

export class RunningRequests {
  /** One request per id, or the set of them when a caller reuses an id (rare: one entry is cheaper). */
  private readonly byId = new Map<string, RunningRequest | Set<RunningRequest>>();

  /** Registers a request that starts now; call the returned function when it ends. */
  add(requestId: string): { request: RunningRequest; done: () => void } {
    const request = new RunningRequest();
    const known = this.byId.get(requestId);
    if (known === undefined) this.byId.set(requestId, request);
    else if (known instanceof Set) known.add(request);
    else this.byId.set(requestId, new Set([known, request]));
    const done = (): void => {
      const now = this.byId.get(requestId);
      if (now === request) this.byId.delete(requestId);
      else if (now instanceof Set) {
        now.delete(request);
        if (now.size === 0) this.byId.delete(requestId);
      }
    };
    return { request, done };
  }

  /**
   * Cancels every request with this id that runs for `login` (host, port, user, database and
   * password) and is still cancellable by id; true when it cancelled any. A cancel that cancels
   * nothing counts as failed against every request running under the id.
   */
  cancel(requestId: string, login: ConnectionTarget): boolean {
    const known = this.byId.get(requestId);
    const all = known === undefined ? [] : known instanceof Set ? [...known] : [known];
    const presented = loginDigestOf(login);
    const cancellable: RunningRequest[] = [];
    let compared = 0;
    for (const request of all) {
      const digest = request.loginDigest();
      if (digest === undefined) continue;
      compared += 1;
      // Compared even when the request is no longer cancellable: the work is the same either way.
      const same = timingSafeEqual(digest, presented);
      if (same && request.failedCancels < FAILED_CANCELS_PER_REQUEST) cancellable.push(request);
    }
    if (compared === 0) timingSafeEqual(NO_LOGIN, presented);
    if (cancellable.length === 0) {
      for (const request of all) if (request.target !== undefined) request.failedCancels += 1;
      return false;
    }
    for (const request of cancellable) request.cancel();
    return true;
  }
}

/**
 * One digest of the whole login, compared in constant time: the same server, database and login.
 * sslMode says how to connect, not as whom, so it is not part of it; an absent password differs
 * from an empty one.
 */
function loginDigestOf({ host, port, user, database, password }: ConnectionTarget): Buffer {
  return createHash('sha256')
    .update(JSON.stringify([host, port, user, database, password ?? null]))
    .digest();
}
