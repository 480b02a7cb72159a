/**
 * The requests running in this instance by id, cancellable from another HTTP request with the same
 * login (docs/decisions.md 10.26); a cancel that cancels nothing never says why (10.34).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConnectionTarget } from '../ports/connections';
import { CancelHandle } from './cancel-handle';

/**
 * Cancels of a running request's id that cancelled nothing before it can no longer be cancelled by
 * id (going away still cancels it, 10.7): a guesser's tries at its password.
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
   * Cancels every request with this id that runs for `login` and is still cancellable by id; true
   * when any was. One that cancels nothing counts as failed against every request under the id.
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
 * One digest of the whole login (not sslMode), compared in constant time; an absent password
 * differs from an empty one.
 */
function loginDigestOf({ host, port, user, database, password, owner }: ConnectionTarget): Buffer {
  return createHash('sha256')
    .update(JSON.stringify([host, port, user, database, password ?? null, owner ?? null]))
    .digest();
}
