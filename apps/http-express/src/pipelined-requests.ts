/**
 * Requests pipelined on one connection run one after the other, in the order they came: each
 * starts once the answer before it was written whole (docs/decisions.md 10.54). Node parses them
 * as they arrive and answers them in order, but hands each to the app at once, so a read sent
 * after a write on the same connection could run before the write, and a client that reads none
 * of its answers could have every request it sent running and holding its rows at once. A request
 * whose connection ends before its turn (the client went away, or the answer before it closed the
 * connection) starts then, with its caller gone: it runs nothing and is logged as such.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const LAST_ANSWER = Symbol('sqlgate.lastAnswer');

type AnsweringSocket = Socket & { [LAST_ANSWER]?: ServerResponse };

export function inConnectionOrder(listener: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as AnsweringSocket;
    const before = socket[LAST_ANSWER];
    socket[LAST_ANSWER] = res;
    const run = (): void => listener(req, res);
    if (before === undefined || before.writableFinished || before.closed) {
      startWhenOpen(socket, run);
      return;
    }
    let waiting = true;
    const turn = (): void => {
      if (!waiting) return;
      waiting = false;
      before.off('finish', turn);
      socket.off('close', turn);
      startWhenOpen(socket, run);
    };
    before.once('finish', turn);
    socket.once('close', turn);
  };
}

/**
 * Starts a request whose turn came: at once on an open connection (or one that has closed: its
 * caller is gone), else once its connection closed, since an answer that ends the connection is
 * the last one written on it.
 */
function startWhenOpen(socket: Socket, run: () => void): void {
  if (socket.writable || socket.destroyed) run();
  else socket.once('close', run);
}
