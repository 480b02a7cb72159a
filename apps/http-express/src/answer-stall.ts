/**
 * How long a client may take none of an answer before it is given up (docs/decisions.md 10.22), so
 * that a client that stops reading cannot hold its socket, its share of MAX_RESULT_BYTES_TOTAL
 * (10.2) or, for a stream, a pooled connection, for as long as it likes.
 *
 * Node sees an answer move only when the kernel takes more of it, which the kernel does once
 * about a third of the socket's send buffer (up to 4 MB on Linux) is free again: a client reading
 * slowly but steadily moves nothing, as far as Node can tell, until it has read that much. So the
 * limit of a whole answer is long (ANSWER_STALL_TIMEOUT_MS, 60 s), whatever the request's
 * timeoutMs; only a stream with timeoutMs is held to it, as PostgreSQL's statement_timeout, which
 * counts the wait for its client, already is. A whole answer is held to a shorter limit once others
 * need the memory it holds (10.37).
 */
import type { ServerResponse } from 'node:http';
import { giveUpAnswer } from './cut-answers';
import { sharedHoldOf } from './held-answers';
import { TIMER_MAX_MS } from './timer-limit';
import { whenClosed } from './response-closed';

export const DEFAULT_ANSWER_STALL_TIMEOUT_MS = 60_000;
/** Beyond a stream's own timeoutMs, as for a silent server (10.6). */
const STALL_GRACE_MS = 2_000;

/** A stream's limit: its request's timeoutMs and 2 s, or `answerStallMs` without timeoutMs. */
export function streamStallLimit(body: unknown, answerStallMs: number): number {
  const timeoutMs = (body as { timeoutMs?: unknown } | null)?.timeoutMs;
  return typeof timeoutMs === 'number' && timeoutMs > 0
    ? Math.min(timeoutMs + STALL_GRACE_MS, TIMER_MAX_MS)
    : answerStallMs;
}

/**
 * A whole answer's stall limit while others need the memory it holds: when another caller found
 * MAX_RESULT_BYTES_TOTAL held (docs/decisions.md 10.37), a client that takes none of an answer
 * holding some of it is given up after a sixth of the limit from then on (10 s by default).
 */
function contendedStallLimit(answerStallMs: number): number {
  return Math.max(1, Math.floor(answerStallMs / 6));
}

/**
 * A whole answer just written is cut once its client has taken none of it for `answerStallMs`
 * (Node lets the limit pass once while a write is still moving, so after one to two limits), or
 * for the contended limit once others need what it holds of MAX_RESULT_BYTES_TOTAL. An answer the
 * socket took whole at once needs no timer.
 */
export function giveUpWhenStalled(res: ServerResponse, answerStallMs: number): void {
  if (res.writableLength === 0 || res.destroyed) return;
  res.setTimeout(answerStallMs, () => giveUpAnswer(res));
  sharedHoldOf(res)?.onContended(() => giveUpUnlessTaken(res, contendedStallLimit(answerStallMs)));
}

/**
 * From now on, `res` is given up at the end of any `limitMs` in which its client took none of it.
 *
 * Not the socket's own timeout: when it expires, Node compares the bytes still queued with the
 * size of the write when it was handed over, and waits one more limit if they differ. The kernel
 * takes a first part of any large answer at once, so they always differ the first time, and an
 * answer nobody read was given up only after twice the limit (docs/decisions.md 10.37). Here the
 * bytes queued are compared with those queued when this limit began.
 */
function giveUpUnlessTaken(res: ServerResponse, limitMs: number): void {
  let queued = queuedBytesOf(res);
  if (queued === undefined) {
    // A socket that does not say what it still holds: its own timeout, restarted shorter.
    if (!res.destroyed) res.setTimeout(limitMs);
    return;
  }
  const check = (): void => {
    if (res.destroyed || res.writableFinished) return;
    const now = queuedBytesOf(res);
    if (now === queued) {
      giveUpAnswer(res);
      return;
    }
    queued = now;
    timer = setTimeout(check, limitMs).unref();
  };
  let timer = setTimeout(check, limitMs).unref();
  whenClosed(res, () => clearTimeout(timer));
}

/**
 * Bytes of the answer's socket not yet taken by the kernel: what Node's own socket timeout reads
 * (`writeQueueSize` of the socket's handle, TCP or TLS), with no public name. The public counts
 * (`writableLength`, `bufferSize`, `bytesWritten`) hold a write whole until the kernel took all
 * of it, so a client reading one large answer slowly would look as if it read nothing and be cut
 * (docs/decisions.md 10.53). A socket without the count keeps its own timeout (above).
 */
function queuedBytesOf(res: ServerResponse): number | undefined {
  const handle = (res.socket as { _handle?: { writeQueueSize?: unknown } | null } | null)?._handle;
  return typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : undefined;
}
