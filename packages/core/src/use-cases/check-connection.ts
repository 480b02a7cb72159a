/**
 * POST /api/test-connection: one connection outside the pools, with the status rules of
 * docs/decisions.md 5.
 */
import { ErrorCodes, RequestError } from '../errors';
import { errorResponse } from '../execution/response';
import type { ServiceParts } from '../pipeline/service-parts';
import { connectionTestWarnings, parseConnectionCheckTarget } from '../request';
import type { ConnectionCheckResponse } from '../service-types';

export async function checkConnection(
  parts: ServiceParts,
  body: unknown,
): Promise<ConnectionCheckResponse> {
  const { options, connections } = parts;
  try {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new RequestError(ErrorCodes.INVALID_REQUEST, 'Request body must be a JSON object');
    }
    const fields = body as Record<string, unknown>;
    const target = parseConnectionCheckTarget(fields, options.configuredTargets);
    const warnings = connectionTestWarnings(fields);
    const checked = (await options.targetPolicy?.check(target)) ?? target;
    const check = await connections.check(checked);
    const response: ConnectionCheckResponse = check.ok
      ? { body: { success: true, message: 'Connection successful', ...check.value } }
      : checkFailure(check.error);
    if (warnings) response.body.warnings = warnings;
    return response;
  } catch (error) {
    return checkFailure(error);
  }
}

/** The answer of a connection check that failed: the error's message and code only. */
function checkFailure(error: unknown): ConnectionCheckResponse {
  const { body, failure } = errorResponse(error, 0);
  const reported = body.error;
  const message =
    typeof reported === 'string' ? reported : (reported as { message: string }).message;
  const code =
    typeof reported === 'string' ? (failure?.code ?? 'ERROR') : (reported as { code: string }).code;
  return { body: { success: false, error: { message, code } }, failure };
}
