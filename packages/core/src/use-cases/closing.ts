/** Ending a service: its sessions first, then its pools, its cache and its counters. */
import type { ServiceParts } from '../pipeline/service-parts';

export function serviceClosing({ sessions, connections, cache, counters, options }: ServiceParts) {
  let sessionsClosing: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  function closeSessions(): Promise<void> {
    sessionsClosing ??= sessions.closeAll();
    return sessionsClosing;
  }
  function close(): Promise<void> {
    // Sessions first: each is ended and its connection given back to be cleaned (ROLLBACK,
    // DISCARD ALL) before the pools end. A store that fails to close must not keep the pools open.
    // The replicas' lag checks stop before the pools they use end.
    options.readRouting?.close();
    closing ??= closeSessions()
      .then(() =>
        Promise.all([
          connections.close(),
          // The cache first: its last try of unconfirmed invalidations may share the counters'
          // connection (Redis).
          (cache?.close() ?? Promise.resolve())
            .catch(() => undefined)
            .then(() => counters.close?.())
            .catch(() => undefined),
        ]),
      )
      .then(() => undefined);
    return closing;
  }
  return { closeSessions, close };
}
