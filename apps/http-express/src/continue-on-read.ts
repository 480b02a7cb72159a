/**
 * `Expect: 100-continue` asks whether to send the body. Node says yes at once, before any route
 * has looked at the request; sqlgate says it when a route starts reading the body, so a request
 * refused on its headers alone (403, 413, 415, 501...) is answered without first inviting an
 * upload that would be thrown away. Node closes the connection after an answer given without
 * `100 Continue`: the client may still send the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const AWAITING_CONTINUE = Symbol('sqlgate.awaitingContinue');

type AwaitingRequest = IncomingMessage & { [AWAITING_CONTINUE]?: ServerResponse };

/** The request expects 100-continue: it is sent when `continueIfAsked` is called, not before. */
export function holdContinue(req: IncomingMessage, res: ServerResponse): void {
  (req as AwaitingRequest)[AWAITING_CONTINUE] = res;
}

/** Whether the client still waits for `100 Continue` before it sends the body. */
export function awaitsContinue(req: IncomingMessage): boolean {
  return (req as AwaitingRequest)[AWAITING_CONTINUE] !== undefined;
}

/** A route starts reading the body: the client is told to send it, if it asked. */
export function continueIfAsked(req: IncomingMessage): void {
  const res = (req as AwaitingRequest)[AWAITING_CONTINUE];
  if (res === undefined) return;
  (req as AwaitingRequest)[AWAITING_CONTINUE] = undefined;
  if (!res.headersSent && !res.destroyed) res.writeContinue();
}
