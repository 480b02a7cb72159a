/**
 * A whole answer's hold on MAX_RESULT_BYTES_TOTAL (docs/decisions.md 10.2, 10.37), from the query
 * service to the response that writes it. Once serialised, the answer holds its JSON, not its rows,
 * until the response closes (written to the end, or its client gone): that is what it is counted
 * as meanwhile, which may be more than its rows (long column names, escapes).
 */
import type { ServerResponse } from 'node:http';
import type { HeldResult } from '@sqlgate/core';
import { whenClosed } from './response-closed';

/**
 * On the response itself rather than in a WeakMap keyed by responses: the collector traces every
 * WeakMap entry apart, and every request has one (README, Performance).
 */
const HELD = Symbol('sqlgate.heldResult');

type HoldingResponse = ServerResponse & { [HELD]?: HeldResult };

/** `ExecuteOptions.holdResult` for the request `res` answers. */
export function holdUntilClosed(res: ServerResponse): (held: HeldResult) => void {
  return (held) => {
    (res as HoldingResponse)[HELD] = held;
    if (held.holdsSharedBytes) releaseWhenClosed(res, held);
  };
}

/** From now on the answer of `res` holds `bytes` of JSON. */
export function holdAsWritten(res: ServerResponse, bytes: number): void {
  const held = (res as HoldingResponse)[HELD];
  if (!held) return;
  const releaseRegistered = held.holdsSharedBytes;
  held.holdAs(bytes);
  if (!releaseRegistered && held.holdsSharedBytes) releaseWhenClosed(res, held);
}

/** The hold of the answer of `res` on the shared budget, while it has one. */
export function sharedHoldOf(res: ServerResponse): HeldResult | undefined {
  const held = (res as HoldingResponse)[HELD];
  return held?.holdsSharedBytes ? held : undefined;
}

function releaseWhenClosed(res: ServerResponse, held: HeldResult): void {
  whenClosed(res, () => held.release());
}
