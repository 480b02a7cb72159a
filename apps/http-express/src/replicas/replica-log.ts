/**
 * Says in the log when a replica is left out and when it serves again (docs/decisions.md 13): a
 * replica with a wrong password or an unreachable host would otherwise only show as reads that
 * all go to the primary. Transitions only, never once a second. Replicas are named by their pool
 * (`app/replica-0`), never by their URL.
 */
import type { Logger } from 'pino';
import type { LagListener } from './replica-checks';

export function replicaStateLog(logger: Logger): LagListener {
  const known = new Map<string, boolean>();
  return (connection, replica, lagMs) => {
    const pool = `${connection}/replica-${replica}`;
    const usable = lagMs !== undefined;
    const before = known.get(pool);
    known.set(pool, usable);
    if (before === usable || (before === undefined && usable)) return;
    if (usable) logger.info({ pool }, 'replica is checked well again: it serves reads');
    else {
      logger.warn(
        { pool },
        'replica left out: unreachable, refusing its login, promoted, or its lag unknown; its reads go to the primary',
      );
    }
  };
}
