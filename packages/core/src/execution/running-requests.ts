/**
 * The requests running in this instance, by request id, so that a caller can cancel one from
 * another HTTP request (docs/decisions.md 10.26). Only a caller presenting the credentials the
 * request runs with may cancel it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConnectionTarget } from '../ports/connections';
import { CancelHandle } from './cancel-handle';

/** What a cancel by request id found. */
export type CancelVerdict = 'cancelled' | 'refused' | 'not-found';

/** One running request, cancellable once its target is known (only then can credentials match). */
export class RunningRequest extends CancelHandle {
  target: ConnectionTarget | undefined;
}

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
   * Cancels every request with this id that runs for `credentials` (host, port, user, database and
   * password). `refused` when requests with the id run, but none for these credentials.
   */
  cancel(requestId: string, credentials: ConnectionTarget): CancelVerdict {
    const known = this.byId.get(requestId);
    const all = known === undefined ? [] : known instanceof Set ? [...known] : [known];
    const running = all.filter((request) => request.target !== undefined);
    if (running.length === 0) return 'not-found';
    const mine = running.filter((request) =>
      sameCredentials(request.target as ConnectionTarget, credentials),
    );
    if (mine.length === 0) return 'refused';
    for (const request of mine) request.cancel();
    return 'cancelled';
  }
}

/**
 * The same server, database and login: host, port, user, database and password (compared in
 * constant time). sslMode says how to connect, not as whom, so it is not compared.
 */
export function sameCredentials(a: ConnectionTarget, b: ConnectionTarget): boolean {
  const samePassword = timingSafeEqual(digestOf(a.password), digestOf(b.password));
  return (
    samePassword &&
    a.host === b.host &&
    a.port === b.port &&
    a.user === b.user &&
    a.database === b.database
  );
}

function digestOf(password: string | undefined): Buffer {
  return createHash('sha256')
    .update(password === undefined ? 'absent' : `password:${password}`)
    .digest();
}
