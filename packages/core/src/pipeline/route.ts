/**
 * Between prepare and plan, for a named connection with replicas (docs/decisions.md 13): a request
 * that may run on a standby goes to a replica the routing chooses, anything else to the primary;
 * after a request that may have written, the primary's position becomes its consistency token.
 */
import { ConnectionError, DatabaseError } from '../errors';
import type { ExecutionOutcome } from '../execution/outcome';
import type { ConnectionTarget } from '../ports/connections';
import { requestMayUseCache } from '../cache';
import { runsOnStandby, type ParsedStatement } from '../parser';
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
  if (!routing || target.name === undefined) return prepared;
  const { consistencyToken, signal } = run.executeOptions;
  const runsOnStandby =
    !session &&
    // A standby refuses SERIALIZABLE transactions.
    request.options.isolationLevel !== 'serializable' &&
    // What the cache keeps must be current: a read that may fill it runs on the primary.
    !mayFillCache(run, prepared) &&
    requestRunsOnStandby(statements, { inSession: false, copyFrom: run.mode.kind === 'copy-from' });
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
    mayHaveWritten: !readOnly && statements.some(mayWrite),
    tokenBearing: consistencyToken !== undefined,
  };
  if (route.servedBy === 'primary') return prepared;
  run.target = route.target;
  return { ...prepared, target: route.target, scopeTarget: target };
}

/**
 * Whether a statement may write, or make a write visible: anything but a read a standby could run
 * and transaction control, except COMMIT, END and COMMIT PREPARED, which make visible what a
 * session's earlier requests wrote.
 */
function mayWrite(statement: ParsedStatement): boolean {
  if (statement.keyword === 'COMMIT' || statement.keyword === 'END') return true;
  return statement.statementClass !== 'transaction-control' && !runsOnStandby(statement);
}

/**
 * A request whose answer may be put in the result cache: a whole answer (not streamed, not in
 * PostgreSQL's text) outside a session, with no consistency token, asking for the cache.
 */
function mayFillCache(run: RequestRun, prepared: PreparedRequest): boolean {
  const { cache } = run.parts;
  const { executeOptions, mode } = run;
  return (
    cache !== undefined &&
    (mode.kind === 'whole' || (mode.kind === 'streamed' && executeOptions.rows === undefined)) &&
    executeOptions.textValues !== true &&
    executeOptions.consistencyToken === undefined &&
    cache.isCacheRequested(prepared.request.options) &&
    requestMayUseCache(prepared.statements)
  );
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
 * A read that a replica could not serve: for want of a connection (a replica just stopped, which
 * the lag check has not seen yet; it is then left out), or because the standby cancelled it in a
 * conflict with its recovery (40001, 40P01: replay needed what the read held, such as a lock the
 * primary took). It wrote nothing and sent nothing yet (a whole answer, or a streamed one before
 * its first event), so it runs again on the primary.
 */
export function rerunOnPrimary(
  run: RequestRun,
  prepared: PreparedRequest,
  outcome: ExecutionOutcome,
): PreparedRequest | undefined {
  const { route } = run;
  // A streamed answer whose first event went out cannot be taken back.
  if (route?.servedBy !== 'replica' || run.rowStream?.hasStarted === true) return undefined;
  const conflicted = conflictWithRecovery(outcome);
  if (!conflicted && !lostConnection(outcome)) return undefined;
  if (!conflicted) run.parts.options.readRouting?.replicaFailed?.(prepared.target);
  // The rerun opens a channel of its own.
  run.rowStream?.close();
  route.servedBy = 'primary';
  run.target = route.primary;
  const { scopeTarget: _replicaScope, ...rest } = prepared;
  return { ...rest, target: route.primary };
}

/**
 * A read on a standby cancelled for its recovery: only such a conflict makes a standby's read
 * answer 40001 or 40P01 (a SERIALIZABLE request never runs there).
 */
function conflictWithRecovery(outcome: ExecutionOutcome): boolean {
  const { failure } = outcome;
  const errors = outcome.outcomes.flatMap((statement) => (statement.ok ? [] : [statement.error]));
  if (failure?.kind === 'request' || failure?.kind === 'transaction') errors.push(failure.error);
  return errors.some(
    (error) =>
      error instanceof DatabaseError && (error.sqlState === '40001' || error.sqlState === '40P01'),
  );
}

function lostConnection(outcome: ExecutionOutcome): boolean {
  const { failure } = outcome;
  if (failure?.kind === 'request') return failure.error instanceof ConnectionError;
  return outcome.outcomes.some(
    (statement) => !statement.ok && statement.error instanceof ConnectionError,
  );
}
