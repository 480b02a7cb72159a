/**
 * The headers of an answer on the server's direct query path, kept aside until the answer's one
 * `writeHead`. Node's `writeHead` takes an object of headers as it is when none were set before
 * with `setHeader`; otherwise it sets them one by one into a dictionary of their own and validates
 * each twice. Measured on an answer given at once, that cost a tenth of the request's CPU.
 *
 * Code that runs on both paths reads and adds headers here: on the direct path they are kept in a
 * plain object, elsewhere (Express routes) they go to `setHeader` as usual.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { bodyDeadlinesFor } from './body-deadlines';

const KEPT = Symbol('sqlgate.keptHeaders');

type KeepingResponse = ServerResponse & { [KEPT]?: OutgoingHttpHeaders };

/** From now on this response's headers wait for `writeAnswerHead` (the direct path only). */
export function keepHeadersAside(res: ServerResponse): void {
  (res as KeepingResponse)[KEPT] = {};
}

/** Adds a header, or replaces it. Names are written as the callers here spell them. */
export function setAnswerHeader(res: ServerResponse, name: string, value: string): void {
  const kept = (res as KeepingResponse)[KEPT];
  if (kept) kept[name] = value;
  else res.setHeader(name, value);
}

/** A header set before, by `setAnswerHeader` (with the same spelling) or `setHeader`. */
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
export function bodyStillComing(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const { headers } = req;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length']) > 0;
}

/** A rest of a body up to this size is read after an early answer; the connection is kept. */
const SMALL_REST_BYTES = 64 * 1024;
/** How long that rest may take to arrive before the connection is closed. */
const SMALL_REST_TIMEOUT_MS = 10_000;

/**
 * For an answer given now, before the request's body arrived (docs/decisions.md 10.17): true when
 * the connection must close, because the rest may be large or its length is unknown, and is not
 * waited for. A small declared rest is drained instead (read and dropped, within
 * SMALL_REST_TIMEOUT_MS), and the answer is false: a client still sending it gets the answer
 * rather than a reset of the connection, and keeps the connection.
 */
export function closeOrDrainAfterEarlyAnswer(req: IncomingMessage): boolean {
  if (!bodyStillComing(req)) return false;
  const declared = Number(req.headers['content-length']);
  if (req.headers['transfer-encoding'] !== undefined || !(declared <= SMALL_REST_BYTES)) {
    return true;
  }
  readSmallRest(req);
  return false;
}

const READING_REST = Symbol('sqlgate.readingRest');

function readSmallRest(req: IncomingMessage & { [READING_REST]?: true }): void {
  if (req[READING_REST]) return;
  req[READING_REST] = true;
  const stop = bodyDeadlinesFor(SMALL_REST_TIMEOUT_MS).watch(() => req.socket.destroy());
  req.on('end', stop);
  req.on('close', stop);
  req.resume();
}

/**
 * Closes the connection after any answer given before the request's body arrived, however the
 * answer is written (Express's `res.send`, `res.json`, static files...): the app's routes do not
 * all go through `writeAnswerHead`. For the app's requests only; the server's direct path writes
 * through `writeAnswerHead`.
 */
export function closeWhenAnsweredEarly(req: IncomingMessage, res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
    if (closeOrDrainAfterEarlyAnswer(req)) this.setHeader('Connection', 'close');
    return writeHead.apply(this, args);
  } as typeof writeHead;
}

/**
 * Writes the status line with the headers kept so far and `headers`. An answer that leaves before
 * the request's body arrived closes the connection after it: the rest of the body is not waited for.
 */
export function writeAnswerHead(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
): void {
  if (closeOrDrainAfterEarlyAnswer(res.req)) setAnswerHeader(res, 'Connection', 'close');
  const kept = (res as KeepingResponse)[KEPT];
  if (!kept) {
    res.writeHead(status, headers);
    return;
  }
  for (const name in headers) kept[name] = headers[name];
  res.writeHead(status, kept);
}
