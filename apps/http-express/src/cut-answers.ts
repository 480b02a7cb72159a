/**
 * Requests sqlgate itself cut short (docs/decisions.md 10.22: a CSV or COPY answer whose statement
 * failed, a stream a defect ended, an answer whole or streamed that its client stopped taking; 9:
 * a request still running when a shutdown's grace period ends). The request log and the metrics
 * tell them from clients that went away: they carry the status sent, and `cut: true`.
 */
import type { ServerResponse } from 'node:http';

const cut = new WeakSet<ServerResponse>();

/** A client that takes nothing of what was written is not waited for longer than this. */
const FLUSH_LIMIT_MS = 5_000;

/**
 * Ends the answer without its proper end (no final chunk), so no client takes it as complete.
 * What was written, the status line included, still goes out first: destroying the response at
 * once would drop it, and the client would see no answer at all instead of a cut 200.
 */
export function cutAnswer(res: ServerResponse): void {
  cut.add(res);
  const { socket } = res;
  if (!socket || socket.destroyed) {
    res.destroy();
    return;
  }
  socket.end();
  setTimeout(() => res.destroy(), FLUSH_LIMIT_MS).unref();
}

/** Ends an answer whose client has taken none of it for too long: at once, nothing more is sent. */
export function giveUpAnswer(res: ServerResponse): void {
  cut.add(res);
  res.destroy();
}

export function wasCutBySqlgate(res: ServerResponse): boolean {
  return cut.has(res);
}

const REFUSED_WITH = Symbol('sqlgate.refusedWith');

type RefusedResponse = ServerResponse & { [REFUSED_WITH]?: number };

/**
 * Marks a request whose body Node's parser refused part way (a bad chunk, an early end): the
 * refusal, written on the socket with `status`, is its answer, and it is logged and counted so.
 */
export function markRefusedByParser(res: ServerResponse, status: number): void {
  (res as RefusedResponse)[REFUSED_WITH] = status;
}

/** The status of the parser's refusal that answered this request, if one did. */
export function parserRefusalOf(res: ServerResponse): number | undefined {
  return (res as RefusedResponse)[REFUSED_WITH];
}

/**
 * Marks a request sqlgate stops without ending its answer here: one cancelled at the end of a
 * shutdown's grace period, which answers that it was cancelled.
 */
export function markCut(res: ServerResponse): void {
  cut.add(res);
}

/**
 * The status a request is logged and counted with: the one sent; 503 for an answer sqlgate cut
 * before sending any; 499 for one whose client went away first (nginx's, docs/decisions.md 10.7).
 */
export function loggedStatusOf(res: ServerResponse): number {
  const refused = parserRefusalOf(res);
  if (refused !== undefined) return refused;
  if (res.writableFinished) return res.statusCode;
  if (!cut.has(res)) return 499;
  return res.headersSent ? res.statusCode : 503;
}
