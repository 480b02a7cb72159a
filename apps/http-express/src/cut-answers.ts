/**
 * Answers sqlgate itself cut short after their status was sent (docs/decisions.md 10.22: a CSV or
 * COPY answer whose statement failed, a stream a defect ended). The request log and the metrics
 * tell them from clients that went away: the status they carry is the one sent.
 */
import type { ServerResponse } from 'node:http';

const cut = new WeakSet<ServerResponse>();

/** Ends the answer without its proper end, so no client takes it as complete. */
export function cutAnswer(res: ServerResponse): void {
  cut.add(res);
  res.destroy();
}

export function wasCutBySqlgate(res: ServerResponse): boolean {
  return cut.has(res);
}
