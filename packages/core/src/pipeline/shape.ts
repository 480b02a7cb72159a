/**
 * The fourth step: the outcome shaped into the answer, with what the caller should know of it
 * (a cancel, rows cut for the shared budget, duplicate column names); and the answer of a request
 * that failed before it had an outcome.
 */
import { noteCacheBypasses } from '../execution/cache-use';
import { asCancelled, cancelledFailure } from '../execution/cancelled';
import { elapsed, type ExecutionContext } from '../execution/context';
import type { ExecutionOutcome } from '../execution/outcome';
import {
  duplicateColumnWarnings,
  errorResponse,
  shapeResponse,
  withWarnings,
  type QueryResponseBody,
} from '../execution/response';
import { ErrorCodes } from '../errors';
import {
  SHARED_BUDGET_WARNINGS,
  type QueryServiceResponse,
  type QueryTimings,
} from '../service-types';
import { withFields } from '../with-fields';
import type { PlannedRequest } from './plan';
import type { RequestRun } from './request-run';

export function shapeAnswer(
  run: RequestRun,
  planned: PlannedRequest,
  executed: ExecutionOutcome,
): QueryServiceResponse {
  const { context, plan, textValues } = planned;
  const outcome = context.cancelled ? asCancelled(executed) : executed;
  run.outcome = outcome;
  noteCacheBypasses(outcome, run.cacheUse);
  const executionMs = elapsed(run.parts.clock, run.started);
  const shaped = shapeResponse(plan, outcome, executionMs);
  if (context.cancelled) {
    shaped.failure = cancelledFailure(shaped.failure, outcome);
    // Programs tell a cancelled request apart without reading messages.
    if (shaped.failure?.code === ErrorCodes.REQUEST_CANCELLED) {
      shaped.body = { ...shaped.body, cancelled: true } as QueryResponseBody;
    }
  }
  const sharedLimit = context.sharedLimit ?? run.rowStream?.sharedLimit;
  if (sharedLimit && cutByBytes(outcome)) {
    run.warnings = [...(run.warnings ?? []), SHARED_BUDGET_WARNINGS[sharedLimit]];
    // Answers whose clients take nothing may now be given up sooner (a stream's refused row
    // told them already).
    if (sharedLimit === 'others' && !run.rowStream) {
      run.parts.settings.sharedResultBudget?.contended();
    }
  }
  if (context.options.rowMode === 'object' && !textValues) {
    const duplicates = duplicateColumnWarnings(outcome);
    if (duplicates.length > 0) run.warnings = [...(run.warnings ?? []), ...duplicates];
  }
  if (run.route) {
    // Only on a named connection with replicas: other answers keep their fields.
    const { servedBy } = run.route;
    shaped.body = withFields(shaped.body, { servedBy }) as QueryResponseBody;
    return withWarnings(
      withFields(shaped, { timings: timings(context, executionMs), servedBy }),
      run.warnings,
    );
  }
  return withWarnings(withFields(shaped, { timings: timings(context, executionMs) }), run.warnings);
}

/** The answer of a request refused or failed before it had an outcome: a request error, or a defect. */
export function failedAnswer(run: RequestRun, error: unknown): QueryServiceResponse {
  const executionMs = elapsed(run.parts.clock, run.started);
  return withWarnings(
    withFields(errorResponse(error, executionMs), { timings: timings(run.context, executionMs) }),
    run.warnings,
  );
}

function timings(context: ExecutionContext | undefined, executionMs: number): QueryTimings {
  return { poolWaitMs: context?.poolWaitMs ?? 0, executionMs };
}

function cutByBytes(outcome: ExecutionOutcome): boolean {
  return outcome.outcomes.some(
    (statement) => statement.ok && statement.result.truncatedBy === 'bytes',
  );
}
