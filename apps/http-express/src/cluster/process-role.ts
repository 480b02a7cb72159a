/**
 * What the `sqlgate` command is in this process (docs/decisions.md 10.28): the server itself
 * (WORKERS=1), the primary of its workers, or one of them.
 */
import { ConfigError } from '../config';

/**
 * Set by the primary for its workers, to its own pid. Checked against the parent's pid, so that a
 * value inherited by some other process is not taken for an invitation.
 */
export const PRIMARY_PID_VARIABLE = 'SQLGATE_CLUSTER_PRIMARY_PID';

export type ProcessRole = 'single' | 'primary' | 'worker';

export interface ProcessFacts {
  env: Record<string, string | undefined>;
  /**
   * `cluster.isPrimary`: not a worker of any node:cluster primary. Asked only when it matters, so
   * that WORKERS=1 does not even load node:cluster.
   */
  isClusterPrimary: () => boolean;
  parentPid: number;
}

export function processRole(workers: number, facts: ProcessFacts): ProcessRole {
  const primaryPid = facts.env[PRIMARY_PID_VARIABLE];
  if (primaryPid !== undefined && primaryPid === String(facts.parentPid)) {
    if (!facts.isClusterPrimary()) return 'worker';
  }
  if (workers === 1) return 'single';
  if (!facts.isClusterPrimary()) {
    // Another cluster manager (pm2's cluster mode) forked this process: it cannot fork its own.
    throw new ConfigError(
      `WORKERS must be 1 when sqlgate runs as a worker of another cluster manager, got '${workers}'`,
    );
  }
  return 'primary';
}
