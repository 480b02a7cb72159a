/**
 * Between prepare and plan, for a named connection with replicas (docs/decisions.md 13): a request
 * that may run on a standby goes to a replica the routing chooses, anything else to the primary;
 * after a request that may have written, the primary's position becomes its consistency token.
 */
import { ConnectionError } from '../errors';
import type { ExecutionOutcome } from '../execution/outcome';
import type { ConnectionTarget } from '../ports/connections';
import { requestRunsOnStandby, type ServedBy } from '../routing/replica-choice';
import type { PreparedRequest } from './prepare';
import type { RequestRun } from './request-run';

export interface RequestRoute {
  servedBy: ServedBy;
  /** The connection's own target: its primary. */
  primary: ConnectionTarget;
  /** The request may have written: its answer carries a consistency token. */
  mayHaveWritten: boolean;
  /** The caller sent a consistency token: the result cache is not read. */
  tokenBearing: boolean;
}

export async function routeRequest(
  run: RequestRun,
  prepared: PreparedRequest,
): Promise<PreparedRequest> {
  const routing = run.parts.options.readRouting;
  const { target, session, statements, request } = prepared;
  if (!routing || session || target.name === undefined) return prepared;
  const runsOnStandby =
    // A standby refuses SERIALIZABLE transactions.
    request.options.isolationLevel !== 'serializable' &&
    requestRunsOnStandby(statements, {
      inSession: false,
      copyFrom: run.mode.kind === 'copy-from',
    });
  const { consistencyToken, signal } = run.executeOptions;
  const routed = routing.route(target, {
    runsOnStandby,
    ...(consistencyToken === undefined ? {} : { consistencyToken }),
    ...(signal === undefined ? {} : { signal }),
  });
  if (routed === undefined) return prepared;
  const route = routed instanceof Promise ? await routed : routed;
  const { options, identity } = request;
  // A READ ONLY transaction (readOnly, dryRun, reads-only credentials) writes nothing.
  const readOnly = options.readOnly || options.dryRun || identity?.may === 'read';
  run.route = {
    servedBy: route.servedBy,
    primary: target,
    mayHaveWritten: !runsOnStandby && !readOnly,
    tokenBearing: consistencyToken !== undefined,
  };
  if (route.servedBy === 'primary') return prepared;
  run.target = route.target;
  return { ...prepared, target: route.target, scopeTarget: target };
}

/** The consistency token of a request that may have written and reached its primary. */
export async function tokenOfWrite(
  run: RequestRun,
  connected: boolean,
): Promise<string | undefined> {
  const { route } = run;
  const routing = run.parts.options.readRouting;
  if (!route?.mayHaveWritten || !connected || !routing) return undefined;
  return routing.tokenAfterWrite(route.primary);
}

/**
 * A whole answer's request that a replica could not serve for want of a connection (a replica
 * just stopped, which the lag check has not seen yet): it wrote nothing and sent no row, so it runs
 * again on the primary, and the replica is left out.
 */
export function rerunOnPrimary(
  run: RequestRun,
  prepared: PreparedRequest,
  outcome: ExecutionOutcome,
): PreparedRequest | undefined {
  const { route } = run;
  if (route?.servedBy !== 'replica' || run.rowStream !== undefined) return undefined;
  if (!lostConnection(outcome)) return undefined;
  run.parts.options.readRouting?.replicaFailed?.(prepared.target);
  route.servedBy = 'primary';
  run.target = route.primary;
  const { scopeTarget: _replicaScope, ...rest } = prepared;
  return { ...rest, target: route.primary };
}

function lostConnection(outcome: ExecutionOutcome): boolean {
  const { failure } = outcome;
  if (failure?.kind === 'request') return failure.error instanceof ConnectionError;
  return outcome.outcomes.some(
    (statement) => !statement.ok && statement.error instanceof ConnectionError,
  );
}
