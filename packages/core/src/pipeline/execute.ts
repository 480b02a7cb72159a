/**
 * The third step: the plan run (or the COPY fed its data), then the cache told what the request
 * may have written, whether it succeeded or not.
 */
import { writeExtentOf } from '../cache';
import { runCopyFrom } from '../execution/copy-from';
import { executePlan } from '../execution/execute';
import type { ExecutionOutcome } from '../execution/outcome';
import type { ParsedStatement } from '../parser';
import { invalidateWritten, type InvalidationTrouble } from './invalidate';
import type { PlannedRequest } from './plan';
import type { PreparedRequest } from './prepare';
import type { RequestRun } from './request-run';

export async function executeRequest(
  run: RequestRun,
  prepared: PreparedRequest,
  planned: PlannedRequest,
): Promise<ExecutionOutcome> {
  const { mode, parts } = run;
  const { statements, session } = prepared;
  const { context, plan, scope } = planned;
  const { cache } = parts;
  const statusBefore = session?.connection.transactionStatus();
  /** Why the cache may still hold what the request changed, if it may. */
  let trouble: InvalidationTrouble | undefined;
  let outcome: ExecutionOutcome;
  try {
    outcome =
      mode.kind === 'copy-from'
        ? await runCopyFrom(
            context,
            statements[0] as ParsedStatement,
            mode.source,
            prepared.request.identity,
          )
        : await executePlan(context, plan, statements);
    run.outcome = outcome;
  } finally {
    // Also when execution failed: a write may have committed before the failure. Not when a
    // request outside a session never had a connection: it sent nothing (10.27). A session's
    // own bookkeeping decides for it.
    if (cache && (session || context.connected)) {
      const extent = session
        ? session.writesToInvalidate(statements, statusBefore ?? 'idle')
        : writeExtentOf(statements);
      trouble = await invalidateWritten(cache, scope, extent);
    }
  }
  if (trouble) {
    run.warnings = [...(run.warnings ?? []), trouble.warning];
    parts.options.warn?.(trouble.log, {
      reqId: run.executeOptions.requestId,
      place: trouble.place,
    });
  }
  return outcome;
}
