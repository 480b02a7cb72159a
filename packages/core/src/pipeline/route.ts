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
import type { QueryRequest } from '../request';
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
  const { timeoutMs } = request.options;
  const routed = routing.route(target, {
    runsOnStandby,
    ...(consistencyToken === undefined ? {} : { consistencyToken }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    stopped: () => signal?.aborted === true || run.registered?.cancelled === true,
  });
  if (routed === undefined) return prepared;
  const waited = routed instanceof Promise;
  const route = waited ? await routed : routed;
  run.route = {
    servedBy: route.servedBy,
    primary: target,
    mayHaveWritten: !requestIsReadOnly(request) && statements.some(mayWrite),
    tokenBearing: consistencyToken !== undefined,
  };
  // A consistency wait spends the request's timeoutMs like its statements do.
  const timed = waited ? withTimeLeft(run, prepared) : prepared;
  if (route.servedBy === 'primary') return timed;
  run.target = route.target;
  return { ...timed, target: route.target, scopeTarget: target };
}

/**
 * The request with what is left of its timeoutMs since it began: a consistency wait, or a read a
 * replica refused, has spent part of it, and the caller's bound is for the whole request. At least
 * 1 ms, so that a request out of time fails as one that timed out.
 */
function withTimeLeft(run: RequestRun, prepared: PreparedRequest): PreparedRequest {
  const { timeoutMs } = prepared.request.options;
  if (timeoutMs === undefined) return prepared;
  const left = Math.max(1, Math.floor(timeoutMs - (run.parts.clock.now() - run.started)));
  if (left >= timeoutMs) return prepared;
  const options = { ...prepared.request.options, timeoutMs: left };
  return { ...prepared, request: { ...prepared.request, options } };
}

/** A READ ONLY transaction (readOnly, dryRun, reads-only credentials) writes nothing. */
function requestIsReadOnly({ options, identity }: QueryRequest): boolean {
  return options.readOnly || options.dryRun || identity?.may === 'read';
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
 * the lag check has not seen yet; it is then left out), or because the standby refused it (see
 * STANDBY_REFUSALS). It wrote nothing and sent nothing yet (a whole answer, or a streamed one
 * before its first event), so it runs again on the primary; one that tried to write may write
 * there, so its answer carries a token.
 */
export function rerunOnPrimary(
  run: RequestRun,
  prepared: PreparedRequest,
  outcome: ExecutionOutcome,
): PreparedRequest | undefined {
  const { route } = run;
  // A streamed answer whose first event went out cannot be taken back.
  if (route?.servedBy !== 'replica' || run.rowStream?.hasStarted === true) return undefined;
  const refusal = standbyRefusal(outcome);
  if (refusal === undefined && !lostConnection(outcome)) return undefined;
  if (refusal === undefined) run.parts.options.readRouting?.replicaFailed?.(prepared.target);
  if (refusal === 'tried-to-write') route.mayHaveWritten = !requestIsReadOnly(prepared.request);
  // The rerun opens a channel of its own.
  run.rowStream?.close();
  route.servedBy = 'primary';
  run.target = route.primary;
  const { scopeTarget: _replicaScope, ...rest } = withTimeLeft(run, prepared);
  return { ...rest, target: route.primary };
}

/**
 * What a standby's refusal of a read the parser let go there means. 40001 and 40P01: cancelled in
 * a conflict with its recovery (replay needed what the read held, such as a lock the primary
 * took; a SERIALIZABLE request never runs there). 0A000: it reads an unlogged or temporary
 * relation, which a standby does not have. 25006: it tried to write, through something the
 * parser cannot see into (a view over a writing function, an operator, a cast, a domain's check,
 * a row-level security policy).
 */
const STANDBY_REFUSALS: ReadonlyMap<string, 'conflict' | 'not-on-standby' | 'tried-to-write'> =
  new Map([
    ['40001', 'conflict'],
    ['40P01', 'conflict'],
    ['0A000', 'not-on-standby'],
    ['25006', 'tried-to-write'],
  ]);

function standbyRefusal(
  outcome: ExecutionOutcome,
): 'conflict' | 'not-on-standby' | 'tried-to-write' | undefined {
  const { failure } = outcome;
  const errors = outcome.outcomes.flatMap((statement) => (statement.ok ? [] : [statement.error]));
  if (failure?.kind === 'request' || failure?.kind === 'transaction') errors.push(failure.error);
  for (const error of errors) {
    const refusal =
      error instanceof DatabaseError ? STANDBY_REFUSALS.get(error.sqlState) : undefined;
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

function lostConnection(outcome: ExecutionOutcome): boolean {
  const { failure } = outcome;
  if (failure?.kind === 'request') return failure.error instanceof ConnectionError;
  return outcome.outcomes.some(
    (statement) => !statement.ok && statement.error instanceof ConnectionError,
  );
}
