/**
 * ReadRouting over CONFIG_FILE's replicas (docs/decisions.md 13): a request that may run on a
 * standby goes to the least busy replica the lag check found within maxReplicaLagMs; one bearing a
 * consistency token to a replica that has replayed that write, waiting up to CONSISTENCY_WAIT_MS
 * for one, else to the primary. A write's token is the primary's WAL insert position read after
 * its commit.
 */
import {
  chooseReplica,
  consistencyTokenOf,
  eligibleReplicas,
  poolIdOf,
  walPositionOfToken,
  type ConnectionProvider,
  type ConnectionTarget,
  type ReadRoute,
  type ReadRouting,
  type ReplicaRule,
  type RouteRequest,
  type ServedBy,
} from '@sqlgate/core';
import { DEFAULT_MAX_REPLICA_LAG_MS, type AccessConfig } from '../access/config-file';
import { firstRow, PRIMARY_INSERTED, ReplicaChecks, type LagListener } from './replica-checks';

/** How a consistency wait ended: a replica at once, one after waiting, or the primary. */
export type ConsistencyOutcome = 'replica' | 'replica_after_wait' | 'primary';

/** What metrics learn of the routing. */
export interface ReplicaEvents {
  routed(connection: string, servedBy: ServedBy): void;
  lag: LagListener;
  consistencyWait(connection: string, outcome: ConsistencyOutcome): void;
}

export interface ReplicaRoutingOptions {
  /** Between two lag checks. */
  checkIntervalMs: number;
  /** CONSISTENCY_WAIT_MS: how long a token-bearing read may wait for a replica to catch up. */
  consistencyWaitMs: number;
  /** Between two looks at the replicas during a consistency wait. */
  consistencyPollMs?: number;
  events?: ReplicaEvents;
}

/** Lag checks run every second by default. */
export const DEFAULT_REPLICA_CHECK_INTERVAL_MS = 1000;
const DEFAULT_CONSISTENCY_POLL_MS = 20;

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** The routing of the configuration's connections that have replicas; undefined when none has. */
export function replicaRoutingOf(
  access: AccessConfig | undefined,
  connections: ConnectionProvider,
  options: ReplicaRoutingOptions,
): ReadRouting | undefined {
  const sets = new Map<string, ReplicaChecks>();
  for (const [name, connection] of access?.connections ?? []) {
    const { replicas = [], maxReplicaLagMs = DEFAULT_MAX_REPLICA_LAG_MS } = connection;
    if (replicas.length === 0) continue;
    sets.set(
      name,
      new ReplicaChecks(
        { name, primary: { ...connection.target, name }, replicas, maxLagMs: maxReplicaLagMs },
        connections,
        (...lag) => options.events?.lag(...lag),
      ),
    );
  }
  if (sets.size === 0) return undefined;
  for (const set of sets.values()) set.start(options.checkIntervalMs);
  return new ReplicaRouting(sets, connections, options);
}

class ReplicaRouting implements ReadRouting {
  private turn = 0;

  constructor(
    private readonly sets: ReadonlyMap<string, ReplicaChecks>,
    private readonly connections: ConnectionProvider,
    private readonly options: ReplicaRoutingOptions,
  ) {}

  route(
    target: ConnectionTarget,
    request: RouteRequest,
  ): Promise<ReadRoute> | ReadRoute | undefined {
    const set = target.name === undefined ? undefined : this.sets.get(target.name);
    if (!set) return undefined;
    // Not a read the routing counts: it simply stays on the primary.
    if (!request.runsOnStandby) return { target, servedBy: 'primary' };
    if (request.consistencyToken === undefined) {
      return this.served(set, target, this.choose(set, { maxLagMs: set.maxLagMs }));
    }
    return this.routeAfter(set, target, request);
  }

  async tokenAfterWrite(target: ConnectionTarget): Promise<string | undefined> {
    const row = await firstRow(this.connections, target, PRIMARY_INSERTED);
    return typeof row?.[0] === 'string' ? consistencyTokenOf(row[0]) : undefined;
  }

  replicaFailed(target: ConnectionTarget): void {
    for (const set of this.sets.values()) {
      const replica = set.replicaNamed(target.name);
      if (replica) set.leaveOut(replica);
    }
  }

  close(): void {
    for (const set of this.sets.values()) set.stop();
  }

  /** A token-bearing read: a replica that has replayed the token's write, waited for a while. */
  private async routeAfter(
    set: ReplicaChecks,
    target: ConnectionTarget,
    { consistencyToken = '', timeoutMs, stopped = () => false }: RouteRequest,
  ): Promise<ReadRoute> {
    const atLeast = walPositionOfToken(consistencyToken);
    // A token sqlgate did not make names no write: the primary has everything.
    if (atLeast === undefined) return this.waited(set, target, undefined, 'primary');
    const rule: ReplicaRule = { maxLagMs: set.maxLagMs, atLeast };
    const chosen = this.choose(set, rule);
    if (chosen !== undefined) return this.waited(set, target, chosen, 'replica');
    // A position the primary never reached: no replica will replay it, so no wait.
    if (!(await set.primaryHasReached(atLeast))) {
      return this.waited(set, target, undefined, 'primary');
    }
    // The wait spends the caller's timeoutMs: it takes at most half, so that the primary, which
    // can always serve, has the rest. A cancel or a caller gone ends it.
    const deadline =
      Date.now() + Math.min(this.options.consistencyWaitMs, (timeoutMs ?? Infinity) / 2);
    const pollMs = this.options.consistencyPollMs ?? DEFAULT_CONSISTENCY_POLL_MS;
    // Only replicas that may serve at all are worth waiting for.
    while (
      Date.now() < deadline &&
      !stopped() &&
      eligibleReplicas(this.views(set), { maxLagMs: set.maxLagMs }).length > 0
    ) {
      await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
      await set.refreshReplayed();
      const caughtUp = this.choose(set, rule);
      if (caughtUp !== undefined) return this.waited(set, target, caughtUp, 'replica_after_wait');
    }
    return this.waited(set, target, undefined, 'primary');
  }

  private waited(
    set: ReplicaChecks,
    target: ConnectionTarget,
    replica: number | undefined,
    outcome: ConsistencyOutcome,
  ): ReadRoute {
    this.options.events?.consistencyWait(set.name, outcome);
    return this.served(set, target, replica);
  }

  private choose(set: ReplicaChecks, rule: ReplicaRule): number | undefined {
    const chosen = chooseReplica(this.views(set), rule, this.turn);
    this.turn = (this.turn + 1) % 1_000_000;
    return chosen?.index;
  }

  private views(set: ReplicaChecks) {
    const stats = this.connections.poolStats();
    return set.views((replica) => {
      const id = poolIdOf(replica);
      const stat = stats.find((pool) => pool.poolId === id);
      return stat ? stat.activeConnections + stat.waitingClients : 0;
    });
  }

  private served(
    set: ReplicaChecks,
    target: ConnectionTarget,
    replica: number | undefined,
  ): ReadRoute {
    const chosen = replica === undefined ? undefined : set.replicas[replica];
    if (!chosen) {
      this.options.events?.routed(set.name, 'primary');
      return { target, servedBy: 'primary' };
    }
    this.options.events?.routed(set.name, 'replica');
    // The request's owner goes with it: only the same caller may cancel it.
    const routed =
      target.owner === undefined ? chosen.target : { ...chosen.target, owner: target.owner };
    return { target: routed, servedBy: 'replica' };
  }
}
