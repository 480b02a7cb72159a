/**
 * The end of an answer's way out, on the app's routes and on the server's direct query path
 * alike: the status line and headers of an answer given before the request's body arrived, and
 * what becomes of that body's rest (docs/decisions.md 10.17, 10.39).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { bodyDeadlinesFor } from './body-deadlines';
import { awaitsContinue } from './continue-on-read';

const KEPT = Symbol('sqlgate.keptHeaders');

type KeepingResponse = ServerResponse & { [KEPT]?: OutgoingHttpHeaders };

/**
 * From now on the headers sqlgate sets on this response wait for its one `writeAnswerHead` (the
 * server's direct query path, docs/decisions.md 10.29). Node's `writeHead` takes an object of
 * headers as it is when none were set before with `setHeader`; otherwise it sets them one by one
 * into a dictionary of its own and checks each twice. Measured on a cached answer, that cost a
 * fifth of the request's CPU.
 */
export function keepHeadersAside(res: ServerResponse): void {
  (res as KeepingResponse)[KEPT] = {};
}

/** The header of a write's consistency token, in answers and requests (docs/decisions.md 13). */
export const CONSISTENCY_TOKEN = 'Sqlgate-Consistency-Token';

/**
 * Sets a header of the answer: kept aside on the direct path, `setHeader` anywhere else. Names are
 * written as the callers here spell them.
 */
export function setAnswerHeader(res: ServerResponse, name: string, value: string): void {
  const kept = (res as KeepingResponse)[KEPT];
  if (kept) kept[name] = value;
  else res.setHeader(name, value);
}

/** A header set before (by `setAnswerHeader`, with the same spelling, or `setHeader`), as text. */
export function answerHeader(res: ServerResponse, name: string): string | undefined {
  const kept = (res as KeepingResponse)[KEPT];
  const value = kept ? kept[name] : res.getHeader(name);
  return value === undefined ? undefined : String(value);
}

/**
 * Whether part of the request's body has yet to arrive: an answer given without reading it (a
 * refusal, a route that takes no body) would otherwise leave Node reading the rest at the client's
 * pace, without BODY_TIMEOUT_MS or MAX_BODY_BYTES (docs/decisions.md 10.17).
 */
function bodyStillComing(req: IncomingMessage): boolean {
  // A client waiting for `100 Continue` sends nothing until invited (Node closes after the answer).
  if (req.complete || awaitsContinue(req)) return false;
  const { headers } = req;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length']) > 0;
}

/**
 * A rest of a body declared up to this size is read and dropped after an early answer, and the
 * connection kept: a client still sending it (a 5 MB upload answered 413) would otherwise see a
 * reset while writing (EPIPE) instead of the answer, as nginx's lingering close avoids too.
 */
const DRAINED_REST_BYTES = 16 * 1024 * 1024;
/**
 * Any other rest (larger, or chunked) is read and dropped up to this size before the connection is
 * reset; the answer closes the connection, so a client that sees it stops sending well before.
 */
const LINGERING_REST_BYTES = 64 * 1024 * 1024;
/** How long a rest may take to arrive before the connection is closed. */
const DRAINED_REST_TIMEOUT_MS = 10_000;

/**
 * For an answer given now, before the request's body arrived (docs/decisions.md 10.17): true when
 * the connection must close. A rest declared at most DRAINED_REST_BYTES is drained (read and
 * dropped, within DRAINED_REST_TIMEOUT_MS) and the connection kept: the answer is false. Any other
 * rest is drained too, up to LINGERING_REST_BYTES, and the connection closes after the answer in
 * a lingering close: its sending side at once, the rest once the client stopped sending. Either
 * way a client still sending gets the answer rather than a reset. An answer that closes the
 * connection itself (a 408: the body came too slowly) closes it at once.
 */
export function closeOrDrainAfterEarlyAnswer(res: ServerResponse): boolean {
  const { req } = res;
  if (!bodyStillComing(req)) return false;
  if (answerHeader(res, 'Connection')?.toLowerCase() === 'close') return true;
  drainRest(req);
  const declared = Number(req.headers['content-length']);
  return req.headers['transfer-encoding'] !== undefined || !(declared <= DRAINED_REST_BYTES);
}

const READING_REST = Symbol('sqlgate.readingRest');

function drainRest(req: IncomingMessage & { [READING_REST]?: true }): void {
  if (req[READING_REST]) return;
  req[READING_REST] = true;
  const stop = bodyDeadlinesFor(DRAINED_REST_TIMEOUT_MS).watch(() => req.socket.destroy());
  req.on('end', stop);
  req.on('close', stop);
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > LINGERING_REST_BYTES) req.socket.destroy();
  });
  closeOnlyAfterRest(req);
  req.resume();
}

const CLOSING_AFTER_REST = Symbol('sqlgate.closingAfterRest');

type ClosingSocket = Socket & { destroySoon?: () => void; [CLOSING_AFTER_REST]?: true };

/**
 * An answer that ends the connection makes Node close the socket as soon as the answer is written
 * (`destroySoon`, its only way of closing after an answer): with the rest of the body unread, the
 * kernel resets the connection, and the client still writing gets EPIPE instead of the answer, or
 * loses the answer it had not read yet. So the close lingers, as nginx's does: the socket's
 * sending side closes after the answer (a client that sees the end of the connection stops
 * sending, as Node's does), and the socket itself once the rest has been read, the client closed
 * its side, or the drain's bounds destroyed it. Node has no public way to wait for the rest, hence
 * the socket's own `destroySoon` is wrapped for this request (docs/decisions.md 10.53).
 */
function closeOnlyAfterRest(req: IncomingMessage): void {
  const socket = req.socket as ClosingSocket;
  const closeSoon = socket.destroySoon;
  if (typeof closeSoon !== 'function') return;
  socket.destroySoon = () => {
    socket[CLOSING_AFTER_REST] = true;
    socket.end();
    if (req.complete) closeSoon.call(socket);
    else req.once('end', () => closeSoon.call(socket));
  };
  // The socket's own method again once this rest is read: a later answer closes at once.
  req.once('end', () => {
    socket.destroySoon = closeSoon;
  });
}

/**
 * Whether the socket only waits for the rest of a body before it closes: whatever the client sends
 * after that rest is not another request (RFC 9112 9.6), and is not answered.
 */
export function closingAfterRest(socket: Socket): boolean {
  return (socket as ClosingSocket)[CLOSING_AFTER_REST] === true;
}

/**
 * Before an answer leaves: when it leaves before the request's body arrived and must close the
 * connection, says so (`Connection: close`). Every answer of the app and of the server's direct
 * path calls it, through `writeAnswerHead` or, for an answer Express writes (`res.redirect`,
 * `res.send`), before it; Node has no event before an answer's head is written.
 */
export function closeWhenAnsweredEarly(res: ServerResponse): void {
  if (closeOrDrainAfterEarlyAnswer(res)) setAnswerHeader(res, 'Connection', 'close');
}

/**
 * Writes the status line with the headers set (or kept) so far and `headers`. An answer that
 * leaves before the request's body arrived closes the connection after it: the rest of the body
 * is not waited for.
 */
export function writeAnswerHead(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
): void {
  closeWhenAnsweredEarly(res);
  const kept = (res as KeepingResponse)[KEPT];
  if (!kept) {
    res.writeHead(status, headers);
    return;
  }
  for (const name in headers) kept[name] = headers[name];
  res.writeHead(status, kept);
}
