/**
 * Work to do once a response closes, sent or not (Node emits 'close' after 'finish' when the
 * answer was sent, alone when the client went away first). One listener per response runs all of
 * it, in the order it was added: each request registers several such tasks (its log line, its
 * metrics, its cancel signal, its stall timer, its hold on memory), and each listener of its own
 * cost the request an entry in the response's listener list, and a wrapper for `once`.
 */
import type { ServerResponse } from 'node:http';

const ON_CLOSE = Symbol('sqlgate.onClose');

type ClosingResponse = ServerResponse & { [ON_CLOSE]?: (() => void)[] };

/** Runs `work` when `res` closes; at once when it has closed already. */
export function whenClosed(res: ServerResponse, work: () => void): void {
  if (res.closed) {
    work();
    return;
  }
  const closing = res as ClosingResponse;
  let tasks = closing[ON_CLOSE];
  if (tasks === undefined) {
    const all: (() => void)[] = [];
    closing[ON_CLOSE] = tasks = all;
    res.on('close', () => {
      for (const task of all) task();
    });
  }
  tasks.push(work);
}
