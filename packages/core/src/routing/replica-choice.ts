/**
 * Which server runs a request of a named connection that has replicas (docs/decisions.md 13):
 * decisions only, on what the lag check last saw; the checks and the waiting are the caller's.
 */
import type { ParsedStatement } from '../parser';
import { runsOnStandby } from '../parser/standby-safety';

/** Where a request ran: its connection's primary, or one of its replicas. */
export type ServedBy = 'primary' | 'replica';

/** What the lag check last saw of one replica, and how busy its pool is now. */
export interface ReplicaView {
  /** Its place in the connection's `replicas`. */
  index: number;
  /** Reachable and still in recovery at the last check (a promoted one is not). */
  usable: boolean;
  /** Milliseconds of the primary's work not yet replayed; undefined when not known. */
  lagMs: number | undefined;
  /** The WAL position it has replayed; undefined when not known. */
  replayPosition: bigint | undefined;
  /** Its pool's connections lent and callers waiting. */
  busy: number;
}

export interface ReplicaRule {
  /** A replica further behind is left out. */
  maxLagMs: number;
  /** A consistency token's position: only a replica that has replayed it may serve. */
  atLeast?: bigint;
}

/**
 * Whether the request may run on a standby: outside a session, never a COPY ... FROM STDIN, and
 * every statement a read calling no function that could write or take locks.
 */
export function requestRunsOnStandby(
  statements: readonly ParsedStatement[],
  context: { inSession: boolean; copyFrom: boolean },
): boolean {
  if (context.inSession || context.copyFrom || statements.length === 0) return false;
  return statements.every(runsOnStandby);
}

/** The replicas the rule lets serve. */
export function eligibleReplicas(
  replicas: readonly ReplicaView[],
  rule: ReplicaRule,
): ReplicaView[] {
  return replicas.filter(
    (replica) =>
      replica.usable &&
      replica.lagMs !== undefined &&
      replica.lagMs <= rule.maxLagMs &&
      (rule.atLeast === undefined ||
        (replica.replayPosition !== undefined && replica.replayPosition >= rule.atLeast)),
  );
}

/**
 * The least busy replica the rule lets serve, or undefined (the primary serves). Among equally
 * busy ones, `turn` takes them in rotation, so that idle replicas share the reads.
 */
export function chooseReplica(
  replicas: readonly ReplicaView[],
  rule: ReplicaRule,
  turn = 0,
): ReplicaView | undefined {
  const eligible = eligibleReplicas(replicas, rule);
  if (eligible.length === 0) return undefined;
  const leastBusy = Math.min(...eligible.map((replica) => replica.busy));
  const idlest = eligible.filter((replica) => replica.busy === leastBusy);
  return idlest[turn % idlest.length];
}

/**
 * A replica's lag from the positions the check read: none when it has replayed what the primary
 * wrote (an idle primary writes nothing, though its last replayed transaction grows old);
 * otherwise the age of its last replayed transaction, or unknown.
 */
export function replicaLagMs(check: {
  primaryPosition: bigint | undefined;
  replayPosition: bigint | undefined;
  replayAgeMs: number | undefined;
}): number | undefined {
  const { primaryPosition, replayPosition, replayAgeMs } = check;
  if (primaryPosition === undefined || replayPosition === undefined) return undefined;
  if (replayPosition >= primaryPosition) return 0;
  return replayAgeMs === undefined ? undefined : Math.max(0, replayAgeMs);
}
