/**
 * A session's own idle timeout (docs/decisions.md 10.26): asking for more than the server allows
 * (SESSION_IDLE_TIMEOUT_MS) is refused, never silently shortened.
 */
import { ErrorCodes, RequestError } from '../errors';

/**
 * Refuses an `idleTimeoutMs` that is not an integer from 1 to `maxIdleTimeoutMs`. It takes what
 * a body held, so that a transport reading one refuses it with the same words as the use case.
 */
export function refuseIdleTimeout(
  idleTimeoutMs: unknown,
  maxIdleTimeoutMs: number,
): asserts idleTimeoutMs is number {
  if (
    typeof idleTimeoutMs !== 'number' ||
    !Number.isInteger(idleTimeoutMs) ||
    idleTimeoutMs < 1 ||
    idleTimeoutMs > maxIdleTimeoutMs
  ) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `'idleTimeoutMs' must be an integer from 1 to ${maxIdleTimeoutMs} (SESSION_IDLE_TIMEOUT_MS), not ${JSON.stringify(idleTimeoutMs)}`,
    );
  }
}
