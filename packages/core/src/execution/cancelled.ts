/**
 * Requests stopped by a cancel (docs/decisions.md 10.26): the answer of a cancel by request id,
 * and how a cancelled request's answer says so.
 */
import { ConnectionError, ErrorCodes, codedError } from '../errors';
import type { ExecutionOutcome } from './outcome';
import { errorResponse, withWarnings, type ResponseFailure, type ServiceAnswer } from './response';

/**
 * The one answer of every cancel by request id that cancels nothing, whatever the reason, so a
 * guessed password cannot be told from an idle id (docs/decisions.md 10.34).
 */
export const NOTHING_CANCELLED_MESSAGE =
  'Nothing was cancelled: no request with this id runs here for this login, or it can no longer be cancelled by id';

/** The answer of a cancel by request id, once tried wherever the requests run. */
export function cancelAnswer(
  cancelled: boolean,
  warnings?: string[],
): ServiceAnswer<{ cancelled: true }> {
  if (cancelled) return { body: warnings ? { cancelled: true, warnings } : { cancelled: true } };
  const nothing = codedError(ErrorCodes.REQUEST_NOT_FOUND, NOTHING_CANCELLED_MESSAGE);
  return withWarnings(errorResponse(nothing, 0), warnings);
}

/** A request stopped by a cancel says so, whether the cancel came between statements or not. */
export function asCancelled(outcome: ExecutionOutcome): ExecutionOutcome {
  return outcome.failure?.kind === 'aborted'
    ? { ...outcome, failure: { ...outcome.failure, cancelled: true } }
    : outcome;
}

/**
 * The failure of a cancelled request: REQUEST_CANCELLED, also when the statement failed with 57014
 * or was abandoned, so it is not answered as a timeout or a lost server.
 */
export function cancelledFailure(
  failure: ResponseFailure | undefined,
  outcome: ExecutionOutcome,
): ResponseFailure | undefined {
  const stoppedStatement =
    failure?.code === ErrorCodes.DATABASE_ERROR && failure.sqlState === '57014';
  return stoppedStatement || wasAbandoned(outcome)
    ? { code: ErrorCodes.REQUEST_CANCELLED }
    : failure;
}

/** The connection was closed because its server did not stop a cancelled statement. */
function wasAbandoned(outcome: ExecutionOutcome): boolean {
  const errors = outcome.outcomes.map((each) => (each.ok ? undefined : each.error));
  if (outcome.failure?.kind === 'request') errors.push(outcome.failure.error);
  return errors.some(
    (error) => error instanceof ConnectionError && error.systemCode === 'ABANDONED',
  );
}
