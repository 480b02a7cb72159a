/**
 * POST /api/requests/{requestId}/cancel (docs/decisions.md 10.26, 10.34). The answer says whether
 * something was cancelled and nothing else: a cancel that cancels nothing gets one answer, after
 * the same delay, whether the id runs nothing, runs for another login, or can no longer be
 * cancelled by id; a client whose cancels failed too often lately waits (429).
 */
import { clientOfAddress } from './client-address';
import {
  cancelAnswer,
  codedError,
  ErrorCodes,
  errorResponse,
  RequestError,
  serializeResponse,
  type QueryService,
} from '@sqlgate/core';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { LimitedCancels, type CancelVerdict } from './cancel-limit';
import { httpStatusFor } from './http-status';
import { writeInternalError, writeJson } from './query-endpoint';
import { readCancelBody, requestOrRefusal, type ConfiguredTargets } from './contract';
import type { Access } from './access/admission';

/**
 * A cancel that cancels nothing is answered this long after its body was read, however long
 * finding that out took: how long the answer takes cannot tell a request running for another login
 * (a comparison, and with WORKERS=n the other workers asked) from an id that runs nothing.
 */
export const FAILED_CANCEL_ANSWER_MS = 100;

/** Where cancels by request id are tried and counted: this process, or every worker (10.35). */
export interface CancelDesk {
  cancel(requestId: string, body: unknown, client: string): Promise<CancelVerdict>;
}

/** The cancels of one process: its own requests, its own count of each client's failures. */
export function localCancelDesk(service: QueryService, targets?: ConfiguredTargets): CancelDesk {
  return new LimitedCancels((requestId, body) => cancelsHere(service, requestId, body, targets));
}

/**
 * Tries a cancel on this process's own requests, for the login in a cancel's body; true when it
 * cancelled anything. With WORKERS=n the body reaches every worker as its caller sent it, and each
 * reads it again.
 */
export function cancelsHere(
  service: QueryService,
  requestId: string,
  body: unknown,
  targets?: ConfiguredTargets,
): boolean {
  const { sent, owner } = ownerOf(body);
  const read = requestOrRefusal(() => readCancelBody(sent, targets));
  // A refused body cancels nothing (the process that received it answered the refusal).
  if (read instanceof RequestError) return false;
  const login = owner === undefined ? read.target : { ...read.target, owner };
  return service.cancelRequest(requestId, login).failure === undefined;
}

/**
 * Who an admitted cancel is for (docs/decisions.md 12), carried with its body to every worker
 * under a name no caller's body can hold (a NUL in a field's name is refused).
 */
const OWNER_FIELD = '\u0000owner';

function withOwner(body: unknown, owner: string | undefined): unknown {
  if (owner === undefined || typeof body !== 'object' || body === null) return body;
  return { ...body, [OWNER_FIELD]: owner };
}

function ownerOf(body: unknown): { sent: unknown; owner?: string } {
  if (typeof body !== 'object' || body === null || !(OWNER_FIELD in body)) return { sent: body };
  const { [OWNER_FIELD]: owner, ...sent } = body as Record<string, unknown>;
  return typeof owner === 'string' ? { sent, owner } : { sent };
}

export async function answerCancel(
  desk: CancelDesk,
  logger: Logger,
  req: Request,
  res: Response,
  access: Access,
): Promise<void> {
  const started = performance.now();
  const admission = await access.admit(req, res, req.body);
  const read =
    admission instanceof RequestError
      ? admission
      : requestOrRefusal(() => readCancelBody(admission.body, admission.targets));
  if (read instanceof RequestError) {
    const refused = errorResponse(read, 0);
    writeJson(res, httpStatusFor(refused.failure), serializeResponse(refused.body));
    return;
  }
  let verdict: CancelVerdict;
  try {
    const owner = admission instanceof RequestError ? undefined : admission.owner;
    verdict = await desk.cancel(
      String(req.params.requestId ?? ''),
      withOwner(req.body, owner),
      clientOf(req),
    );
  } catch (error) {
    writeInternalError(res, logger, error);
    return;
  }
  if ('retryAfterMs' in verdict) {
    const seconds = Math.ceil(verdict.retryAfterMs / 1000);
    res.setHeader('Retry-After', String(seconds));
    const limited = codedError(
      ErrorCodes.CANCEL_LIMITED,
      `Too many cancels from this client cancelled nothing lately; retry in ${seconds} s`,
    );
    writeJson(res, 429, serializeResponse({ error: limited.message, ...limited.body }));
    return;
  }
  if (!verdict.cancelled) await sleep(started + FAILED_CANCEL_ANSWER_MS - performance.now());
  const { body, failure } = cancelAnswer(verdict.cancelled, read.warnings);
  writeJson(res, httpStatusFor(failure), serializeResponse(body));
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Who sent a request, for the limit of failed cancels: its address as Express tells it (the
 * socket's peer, or, from a proxy TRUST_PROXY names, the address the proxy says it serves), in one
 * spelling (client-address.ts).
 */
export function clientOf(req: Request): string {
  return clientOfAddress(req.ip ?? req.socket.remoteAddress);
}
