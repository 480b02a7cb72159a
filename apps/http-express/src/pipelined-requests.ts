/**
 * Requests pipelined on one connection run one after the other, in the order they came: each
 * starts once the answer before it was written whole (docs/decisions.md 10.54). Node parses them
 * as they arrive and answers them in order, but hands each to the app at once, so a read sent
 * after a write on the same connection could run before the write, and a client that reads none
 * of its answers could have every request it sent running and holding its rows at once. A request
 * whose connection ends before its turn (the client went away, or the answer before it closed the
 * connection) starts then, with its caller gone: it runs nothing and is logged as such.
 *
 * Node stops parsing a connection's input when its answers queue up, not when its requests do:
 * past MAX_WAITING requests waiting their turn, the connection is not read until they start, so a
 * client cannot make the server hold any number of them.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const MAX_WAITING = 32;

const LINE = Symbol('sqlgate.requestLine');

/** A connection's requests: the last one's answer, and the starts of those waiting, in order. */
interface RequestLine {
  last: ServerResponse | undefined;
  waiting: (() => void)[];
  /** Reading stopped because too many wait. */
  paused: boolean;
}

/**
 * Node's HTTP server pauses a connection's parser after the chunk it is reading when its socket
 * says `_paused` (its own flag for answers that queue up), and resumes it when that flag is cleared
 * and the parser told; `socket.pause()` alone does not stop a parser that reads the socket's
 * handle directly (docs/decisions.md 10.54).
 */
type LinedSocket = Socket & {
  [LINE]?: RequestLine;
  _paused?: boolean;
  parser?: { resume?: () => void } | null;
};

function stopReading(socket: LinedSocket): void {
  socket._paused = true;
  socket.pause();
}

function readAgain(socket: LinedSocket): void {
  socket._paused = false;
  socket.parser?.resume?.();
  socket.resume();
}

/** The connection's line, made with its one `close` listener, which starts whatever still waits. */
function lineOf(socket: LinedSocket): RequestLine {
  let line = socket[LINE];
  if (line === undefined) {
    const made: RequestLine = { last: undefined, waiting: [], paused: false };
    socket[LINE] = line = made;
    socket.once('close', () => {
      for (const start of made.waiting.splice(0)) start();
    });
  }
  return line;
}

export function inConnectionOrder(listener: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as LinedSocket;
    const line = lineOf(socket);
    const before = line.last;
    line.last = res;
    const run = (): void => listener(req, res);
    if (before === undefined || before.writableFinished || before.closed) {
      startWhenOpen(socket, line, run);
      return;
    }
    let waiting = true;
    const turn = (): void => {
      if (!waiting) return;
      waiting = false;
      const at = line.waiting.indexOf(turn);
      if (at !== -1) line.waiting.splice(at, 1);
      if (line.paused && line.waiting.length < MAX_WAITING) {
        line.paused = false;
        readAgain(socket);
      }
      startWhenOpen(socket, line, run);
    };
    line.waiting.push(turn);
    before.once('finish', turn);
    // Every time: Node clears its flag when answers drain, whatever this line holds.
    if (line.waiting.length >= MAX_WAITING) {
      line.paused = true;
      stopReading(socket);
    }
  };
}

/**
 * Starts a request whose turn came: at once on an open connection (or one that has closed: its
 * caller is gone), else once its connection closed, since an answer that ends the connection is
 * the last one written on it.
 */
function startWhenOpen(socket: Socket, line: RequestLine, run: () => void): void {
  if (socket.writable || socket.destroyed) run();
  else line.waiting.push(run);
}
