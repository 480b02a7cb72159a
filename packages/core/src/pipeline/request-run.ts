/**
 * One request on its way through the steps: prepare (take the request, check the target, split the
 * SQL) -> plan (the strategy, the stream, the execution context) -> execute (and invalidate what it
 * may have written) -> shape (the answer) -> report (counters, the observer, the result budget).
 */
import type { ExecutionContext } from '../execution/context';
import type { RequestCacheUse } from '../execution/cache-use';
import type { ExecutionOutcome } from '../execution/outcome';
import type { StrategyName } from '../execution/plan';
import type { RunningRequest } from '../execution/running-requests';
import type { ParsedStatement } from '../parser';
import type { ConnectionTarget } from '../ports/connections';
import type { QueryRequest, RequestOrRefusal } from '../request';
import type { QueryServiceResponse, StreamOptions } from '../service-types';
import type { EventChannel } from '../streaming/event-channel';
import { executeRequest } from './execute';
import { planRequest } from './plan';
import { prepareRequest } from './prepare';
import { reportRequest } from './report';
import type { RequestMode } from './request-mode';
import { rerunOnPrimary, tokenOfWrite, type RequestRoute } from './route';
import type { ServiceParts } from './service-parts';
import { failedAnswer, shapeAnswer } from './shape';

/**
 * What the request has come to so far: each step fills in its part; the failure answer and the
 * report read what there is when the request ends, however it ends.
 */
export interface RequestRun {
  readonly parts: ServiceParts;
  readonly mode: RequestMode;
  readonly executeOptions: StreamOptions;
  /** When the request began (the service's clock). */
  readonly started: number;
  /** Enters the request among the running ones by its id, once; undefined without an id. */
  readonly register: () => RunningRequest | undefined;
  registered?: RunningRequest | undefined;
  /** The target the policy checked: where the statements run. */
  target?: ConnectionTarget;
  statements: readonly ParsedStatement[];
  strategy?: StrategyName;
  context?: ExecutionContext;
  /** Where a streamed request's rows go. */
  rowStream?: EventChannel | undefined;
  /** Why a statement that never reached the cache skipped it, by the request's facts. */
  cacheUse?: RequestCacheUse;
  outcome?: ExecutionOutcome;
  warnings?: string[] | undefined;
  /** How a request of a named connection with replicas was routed (docs/decisions.md 13). */
  route?: RequestRoute;
}

/** Runs a request: expected failures are answers, never rejections. */
export function runRequest(
  parts: ServiceParts,
  request: RequestOrRefusal<QueryRequest>,
  executeOptions: StreamOptions,
  mode: RequestMode,
): Promise<QueryServiceResponse> {
  const { requestId } = executeOptions;
  let registration: ReturnType<ServiceParts['running']['add']> | undefined;
  const register = (): RunningRequest | undefined => {
    if (requestId === undefined) return undefined;
    registration ??= parts.running.add(requestId);
    return registration.request;
  };
  const run: RequestRun = {
    parts,
    mode,
    executeOptions,
    started: parts.clock.now(),
    register,
    statements: [],
  };
  // Chained rather than awaited in a try/finally: one turn of the microtasks fewer per request.
  const done = (): void => registration?.done();
  return runSteps(run, request).then(
    (response) => {
      done();
      return response;
    },
    (defect: unknown) => {
      done();
      throw defect;
    },
  );
}

async function runSteps(
  run: RequestRun,
  request: RequestOrRefusal<QueryRequest>,
): Promise<QueryServiceResponse> {
  // docs/decisions.md 10.26: an id the caller chose can stop the request from the start; one
  // sqlgate made up, once the caller can learn it (when the answer starts streaming). Entering
  // every request costs a busy server several per cent of its SELECT 1 throughput (measured).
  if (run.executeOptions.requestIdKnown !== 'when-streaming') run.registered = run.register();
  try {
    let prepared = await prepareRequest(run, request);
    let planned = planRequest(run, prepared);
    let outcome = await executeRequest(run, prepared, planned);
    const onPrimary = rerunOnPrimary(run, prepared, outcome);
    if (onPrimary) {
      prepared = onPrimary;
      planned = planRequest(run, prepared);
      outcome = await executeRequest(run, prepared, planned);
    }
    const token = await tokenOfWrite(run, planned.context.connected);
    const answer = shapeAnswer(run, planned, outcome);
    return token === undefined ? answer : { ...answer, consistencyToken: token };
  } catch (error) {
    // A refusal, or a defect (docs/decisions.md 10.21).
    return failedAnswer(run, error);
  } finally {
    reportRequest(run);
  }
}
