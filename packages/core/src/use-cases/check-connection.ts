/**
 * POST /api/test-connection: one connection outside the pools, with the status rules of
 * docs/decisions.md 5.
 */
import { RequestError } from '../errors';
import { errorResponse } from '../execution/response';
import type { ServiceParts } from '../pipeline/service-parts';
import type { ConnectionCheckRequest, RequestOrRefusal } from '../request';
import type { ConnectionCheckResponse } from '../service-types';

export async function checkConnection(
  parts: ServiceParts,
  request: RequestOrRefusal<ConnectionCheckRequest>,
): Promise<ConnectionCheckResponse> {
  const { options, connections } = parts;
  try {
    if (request instanceof RequestError) throw request;
    const { target, warnings } = request;
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
