/**
 * The last step, however the request ended: the answer's hold on the shared result budget handed
 * on or given back, its statements counted (docs/decisions.md 8), and the observer told (10.25).
 */
import type { ExecutionOutcome } from '../execution/outcome';
import { reportRequestFailure, reportStatements } from '../execution/report-to-observer';
import type { ParsedStatement } from '../parser';
import type { SharedCounters } from '../ports/cache-store';
import type { ExecuteOptions } from '../service-types';
import { countableMs, zeroTotals } from '../stats';
import type { EventChannel } from '../streaming/event-channel';
import type { RequestRun } from './request-run';

export function reportRequest(run: RequestRun): void {
  const { context, rowStream, executeOptions, outcome, statements, target } = run;
  const { settings, counters } = run.parts;
  // A whole answer's hold goes to its writer, who counts it as the JSON it writes (which may
  // draw even when the rows did not) and gives it back once written.
  if (context && !rowStream && settings.sharedResultBudget && executeOptions.holdResult) {
    executeOptions.holdResult(context.heldResult);
  } else context?.heldResult.release();
  if (rowStream) releaseStreamedRows(rowStream, executeOptions);
  countStatements(counters, statements, outcome);
  const { observer } = executeOptions;
  if (observer?.statementEnded && target) {
    reportStatements({
      observer,
      target,
      strategy: run.strategy ?? 'none',
      statements,
      outcome,
      cacheUse: run.cacheUse,
    });
  }
  if (observer?.requestFailed && outcome?.failure) {
    reportRequestFailure(observer, outcome.failure, context?.acquireFailures);
  }
}

/**
 * A stream's rows in flight stop drawing on the shared budget once its answer is written (the
 * transport's `holdResult`) or its consumer is done with it (event-channel.ts); at once when the
 * answer was not streamed after all.
 */
function releaseStreamedRows(channel: EventChannel, executeOptions: ExecuteOptions): void {
  const held = channel.heldRows;
  if (!channel.hasStarted) channel.releaseRows();
  else if (held?.holdsSharedBytes) executeOptions.holdResult?.(held);
}

/** docs/decisions.md 8: every statement of a request is counted once, as a hit, as executed, or as not run. */
function countStatements(
  counters: SharedCounters,
  statements: readonly ParsedStatement[],
  outcome: ExecutionOutcome | undefined,
): void {
  if (statements.length === 0) return;
  const delta = zeroTotals();
  const outcomes = outcome?.outcomes ?? [];
  for (const each of outcomes) {
    if (each.ok && each.cached) {
      delta.hits += 1;
      continue;
    }
    delta.misses += 1;
    delta.executed += 1;
    delta.executionMs += countableMs(each.executionTime);
  }
  delta.misses += Math.max(0, statements.length - outcomes.length);
  counters.add(delta);
}
