/**
 * Work to do once a response closes, sent or not (Node emits 'close' after 'finish' when the
 * answer was sent, alone when the client went away first). One listener per response runs all of
 * it, in the order it was added: each request registers several such tasks (its log line, its
 * metrics, its cancel signal, its stall timer, its hold on memory), and each listener of its own
 * cost the request an entry in the response's listener list, and a wrapper for `once`.
 *
 * A response queued behind another on its connection (a pipelined request) has no socket yet, and
 * Node emits no 'close' for it when the connection ends first: its work then runs when the
 * connection closes, or at once when it has closed already.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const ON_CLOSE = Symbol('sqlgate.onClose');

type ClosingResponse = ServerResponse & { [ON_CLOSE]?: (() => void)[] };

const QUEUED = Symbol('sqlgate.queuedAnswers');

/** A connection's queued answers' closing work: one `close` listener per connection runs it. */
type QueuingSocket = Socket & { [QUEUED]?: Set<() => void> };

/** Whether `res` will never be written: closed, or queued on a connection that has ended. */
function answerLost(res: ServerResponse): boolean {
  return res.closed || (res.socket === null && res.req.socket.destroyed);
}

/** Runs `work` when `res` closes; at once when it has closed already. */
export function whenClosed(res: ServerResponse, work: () => void): void {
  if (answerLost(res)) {
    work();
    return;
  }
  const closing = res as ClosingResponse;
  let tasks = closing[ON_CLOSE];
  if (tasks === undefined) {
    closing[ON_CLOSE] = tasks = [];
    watchClose(res, tasks);
  }
  tasks.push(work);
}

function watchClose(res: ServerResponse, tasks: (() => void)[]): void {
  let ran = false;
  const runAll = (): void => {
    if (ran) return;
    ran = true;
    queued?.delete(runAll);
    for (const task of tasks) task();
  };
  // Queued: the connection's close is the response's, until Node gives it the socket.
  const queued = res.socket === null ? queuedOn(res.req.socket as QueuingSocket) : undefined;
  queued?.add(runAll);
  res.on('close', runAll);
}

function queuedOn(socket: QueuingSocket): Set<() => void> {
  let queued = socket[QUEUED];
  if (queued === undefined) {
    const made = new Set<() => void>();
    socket[QUEUED] = queued = made;
    socket.once('close', () => {
      for (const runAll of made) runAll();
    });
  }
  return queued;
}
