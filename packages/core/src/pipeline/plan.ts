/**
 * The second step: the strategy that runs the statements, the channel a streamed answer goes to,
 * and the execution context they run with. Nothing is sent yet.
 */
import { requestMayUseCache, writeExtentOf } from '../cache';
import { lazyCacheScope } from '../execution/cache-attempt';
import { ExecutionContext } from '../execution/context';
import { isCopyFromStdin } from '../execution/copy-from';
import { scopeAsIdentity } from '../identity';
import { planExecution, planSessionRequest, type ExecutionPlan } from '../execution/plan';
import type { ParsedStatement } from '../parser';
import { poolIdOf, type CacheScope } from '../ports/connections';
import { copyOutOf, isCopyToStdout } from '../streaming/copy-out';
import type { EventChannel } from '../streaming/event-channel';
import { holdStreamedWriteEnds } from './invalidate';
import type { PreparedRequest } from './prepare';
import { refresherFor } from './refresh';
import type { RequestRun } from './request-run';

export interface PlannedRequest {
  plan: ExecutionPlan;
  context: ExecutionContext;
  /** Every value as PostgreSQL's text, in array rows (a CSV answer). */
  textValues: boolean;
  /** The cache scope of the database reached, asked of the provider once, when needed. */
  scope: () => Promise<CacheScope | undefined>;
}

export function planRequest(run: RequestRun, prepared: PreparedRequest): PlannedRequest {
  const { parts, mode, executeOptions } = run;
  const { request, target, statements, session } = prepared;
  const copyOut =
    mode.kind === 'streamed' &&
    statements.length === 1 &&
    isCopyToStdout(statements[0] as ParsedStatement);
  const plan = session
    ? planSessionRequest(statements, request.options)
    : planExecution(statements, request.options, {
        allowed: mode.kind === 'copy-from' ? isCopyFromStdin : copyOut ? isCopyToStdout : undefined,
        batch: prepared.batchParams !== undefined,
        ...(request.identity ? { identity: request.identity } : {}),
      });
  run.strategy = plan.strategy;
  const rowStream = openRowStream(run, prepared, copyOut);
  run.rowStream = rowStream;
  const textValues =
    executeOptions.textValues === true ||
    (rowStream !== undefined && executeOptions.rows === 'text');
  const { cache } = parts;
  run.cacheUse = {
    // A session's reads never use the cache, whatever QUERY_CACHE_DEFAULT says; nor do answers
    // in PostgreSQL's text, which the cache does not keep.
    requested:
      !session &&
      !textValues &&
      run.route?.tokenBearing !== true &&
      cache !== undefined &&
      cache.isCacheRequested(request.options),
    streamed: rowStream !== undefined || mode.kind === 'copy-from',
  };
  const identity = session ? session.identity : request.identity;
  const scopeTarget = prepared.scopeTarget ?? target;
  const scope = lazyCacheScope(
    identity
      ? async () => {
          const settled = await parts.connections.scopeOf(scopeTarget);
          return settled.ok
            ? { ok: true, value: scopeAsIdentity(settled.value, identity) }
            : settled;
        }
      : () => parts.connections.scopeOf(scopeTarget),
  );
  if (rowStream && cache) holdStreamedWriteEnds(rowStream, cache, scope, writeExtentOf(statements));
  const context = contextFor(run, prepared, textValues, scope);
  run.context = context;
  run.registered?.attach(context);
  if (mode.kind === 'session') mode.inSession.attach(context);
  return { plan, context, textValues, scope };
}

/**
 * The channel of a streamed answer, if the request streams: a lone COPY ... TO STDOUT, or rows
 * asked for as they arrive. A request whose id sqlgate made up is entered among the running ones
 * now, when its caller can learn the id.
 */
function openRowStream(
  run: RequestRun,
  prepared: PreparedRequest,
  copyOut: boolean,
): EventChannel | undefined {
  if (run.mode.kind !== 'streamed') return undefined;
  const { openStream } = run.mode;
  const { statements, target, request } = prepared;
  const route = run.route && {
    servedBy: run.route.servedBy,
    mayHaveWritten: run.route.mayHaveWritten,
  };
  const rowStream = copyOut
    ? openStream(poolIdOf(target), copyOutOf(statements[0] as ParsedStatement), route)
    : run.executeOptions.rows
      ? openStream(poolIdOf(target), undefined, route)
      : undefined;
  if (rowStream && run.executeOptions.requestIdKnown === 'when-streaming') {
    run.registered = run.register();
    if (run.registered) run.registered.target = request.target;
  }
  return rowStream;
}

/**
 * A streamed request runs its reads one after another, so that each statement's rows stay
 * together, and never uses the cache (its rows are not kept).
 */
function contextFor(
  run: RequestRun,
  prepared: PreparedRequest,
  textValues: boolean,
  scope: PlannedRequest['scope'],
): ExecutionContext {
  const { parts, executeOptions, rowStream } = run;
  const { request, target, statements, session, batchParams } = prepared;
  const { settings, cache } = parts;
  return new ExecutionContext({
    provider: session ? session.connection.provider : parts.connections,
    target,
    // Text values come as arrays: a CSV row is a list.
    options: textValues ? { ...request.options, rowMode: 'array' } : request.options,
    settings: rowStream
      ? { ...settings, maxParallelReads: 1, textValues, nameStatements: !session }
      : session || textValues
        ? { ...settings, textValues, nameStatements: !session }
        : settings,
    clock: parts.clock,
    signal: executeOptions.signal,
    // A session's reads may see its own uncommitted writes: never cached, never served.
    // A read bearing a consistency token is never served from the cache: an entry may be older
    // than the write the token names (docs/decisions.md 13).
    cacheScope:
      !session &&
      !rowStream &&
      !textValues &&
      run.route?.tokenBearing !== true &&
      cache &&
      requestMayUseCache(statements)
        ? { cache, scope, refresh: refresherFor(parts, target, request.options) }
        : undefined,
    rowStream,
    observer: executeOptions.observer,
    batchParams,
  });
}
