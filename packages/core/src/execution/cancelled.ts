/**
 * Requests stopped by a cancel (docs/decisions.md 10.26): the cancel by request id itself, and how
 * a cancelled request's answer says so.
 */
import type { ConfiguredTargets } from '../configured-targets';
import { ConnectionError, ErrorCodes, codedError } from '../errors';
import { parseCancelRequest } from '../request';
import type { ExecutionOutcome } from './outcome';
import { errorResponse, withWarnings, type ResponseFailure, type ServiceAnswer } from './response';
import type { RunningRequests } from './running-requests';

/**
 * POST /api/requests/{requestId}/cancel: cancels the requests with this id running for the
 * credentials of `body`; 403 for other credentials, 404 when none runs.
 */
export function cancelByRequestId(
  running: RunningRequests,
  requestId: string,
  body: unknown,
  targets?: ConfiguredTargets,
): ServiceAnswer<{ cancelled: true }> {
  try {
    const { target, warnings } = parseCancelRequest(body, targets);
    const verdict = running.cancel(requestId, target);
    if (verdict === 'cancelled') {
      return { body: warnings ? { cancelled: true, warnings } : { cancelled: true } };
    }
    const error =
      verdict === 'refused'
        ? codedError(
            ErrorCodes.CANCEL_REFUSED,
            'The request runs with other credentials; only its own caller may cancel it',
          )
        : codedError(ErrorCodes.REQUEST_NOT_FOUND, 'No request with this id runs here');
    return withWarnings(errorResponse(error, 0), warnings);
  } catch (error) {
    return errorResponse(error, 0);
  }
}

/** A request stopped by a cancel says so, whether the cancel came between statements or not. */
export function asCancelled(outcome: ExecutionOutcome): ExecutionOutcome {
  return outcome.failure?.kind === 'aborted'
    ? { ...outcome, failure: { ...outcome.failure, cancelled: true } }
    : outcome;
}

/**
 * The failure of a cancelled request: REQUEST_CANCELLED, also when the cancel reached a running
 * statement (PostgreSQL's 57014 error stays in the body) or the server ignored it and the
 * connection was closed (ABANDONED), so it is not answered as a timeout or a lost server.
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
