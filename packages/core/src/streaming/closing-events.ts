/** The last events of a streamed request, from the answer the buffered path would have given. */
import type { QueryServiceResponse } from '../service-types';
import type { StreamEvent } from './stream-events';

/** Fields of a buffered answer that belong to rows and statements, already streamed. */
const STREAMED_FIELDS = new Set(['results', 'rows', 'fields', 'multipleResults', 'warnings']);

export function closingEvents(response: QueryServiceResponse): StreamEvent[] {
  const body = response.body as Record<string, unknown>;
  const events: StreamEvent[] = [];
  const { failure } = response;
  if (failure) {
    const errorBody = Object.fromEntries(
      Object.entries(body).filter(([name]) => !STREAMED_FIELDS.has(name)),
    );
    // The failed statement's own error lives in `results`, which was streamed: it is lifted here.
    const index = body.failedStatementIndex;
    const failed =
      typeof index === 'number' && Array.isArray(body.results)
        ? (body.results[index] as { cause?: { code?: unknown } } | undefined)
        : undefined;
    if (failed?.cause && errorBody.cause === undefined) errorBody.cause = failed.cause;
    liftErrorObject(errorBody);
    const sqlState =
      failure.sqlState ?? (typeof failed?.cause?.code === 'string' ? failed.cause.code : undefined);
    events.push({
      type: 'error',
      body: errorBody as never,
      code: failure.code,
      ...(sqlState ? { sqlState } : {}),
      ...(failure.internal === undefined ? {} : { internal: failure.internal }),
    });
  }
  const done: Extract<StreamEvent, { type: 'done' }> = {
    type: 'done',
    totalExecutionTime: response.timings.executionMs,
  };
  if (typeof body.transactionUsed === 'boolean') done.transactionUsed = body.transactionUsed;
  if (body.rolledBack === true) done.rolledBack = true;
  if (Array.isArray(body.warnings)) done.warnings = body.warnings as string[];
  if (response.servedBy !== undefined) done.servedBy = response.servedBy;
  if (response.consistencyToken !== undefined) done.consistencyToken = response.consistencyToken;
  events.push(done);
  return events;
}

/**
 * One shape for every `error` line (docs/decisions.md 10.42): `error` is the sentence, and a
 * one-statement answer's error object is its `cause`.
 */
function liftErrorObject(errorBody: Record<string, unknown>): void {
  const { error } = errorBody;
  if (typeof error !== 'object' || error === null) return;
  const { message } = error as { message?: unknown };
  errorBody.error = typeof message === 'string' ? message : 'The request failed';
  errorBody.cause ??= error;
}
