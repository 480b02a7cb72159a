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
  private readonly byId = new Map<string, Set<RunningRequest>>();

  /** Registers a request that starts now; call the returned function when it ends. */
  add(requestId: string): { request: RunningRequest; done: () => void } {
    const request = new RunningRequest();
    let same = this.byId.get(requestId);
    if (!same) this.byId.set(requestId, (same = new Set()));
    same.add(request);
    const done = (): void => {
      same.delete(request);
      if (same.size === 0 && this.byId.get(requestId) === same) this.byId.delete(requestId);
    };
    return { request, done };
  }

  /**
   * Cancels every request with this id that runs for `credentials` (host, port, user, database and
   * password). `refused` when requests with the id run, but none for these credentials.
   */
  cancel(requestId: string, credentials: ConnectionTarget): CancelVerdict {
    const running = [...(this.byId.get(requestId) ?? [])].filter(
      (request) => request.target !== undefined,
    );
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
