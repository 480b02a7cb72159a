/**
 * Answers sqlgate itself cut short after their status was sent (docs/decisions.md 10.22: a CSV or
 * COPY answer whose statement failed, a stream a defect ended, a whole answer its client stopped
 * taking). The request log and the metrics
 * tell them from clients that went away: the status they carry is the one sent.
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
