/**
 * The JSON body of an app route, and what becomes of it when a host app mounts sqlgate behind a
 * body parser of its own (`app.use(express.json())` first): docs/decisions.md 10.39. sqlgate reads
 * its bodies itself (json-body.ts); a parser before it has read the stream already, rounded the
 * numbers and kept the last of keys given twice, and answers its own failures with Express's HTML
 * page. So sqlgate must be mounted before any body parser, says so once in the log, and meanwhile
 * refuses what it can no longer prove unchanged.
 */
import type { Application, ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { closeOrDrainAfterEarlyAnswer } from './answer-headers';
import {
  answerBodyError,
  BodyError,
  contentTypeError,
  parsedBody,
  parsedText,
  readJsonBody,
  type BodyLimits,
} from './json-body';

export const MOUNT_ORDER_WARNING =
  "sqlgate received a request body that a body parser mounted before it had read: mount sqlgate before any body parser, e.g. app.use('/db', createApp(...)) before app.use(express.json()). Until then numbers past 2^53 and U+FFFD are refused and keys given twice cannot be seen";

/**
 * Says once, for one app, that a body parser runs before sqlgate: in the app's log, or without
 * one as a process warning (an embedded app logs nowhere unless given a logger).
 */
export function mountOrderWarner(logger: Logger | undefined): () => void {
  let warned = false;
  return () => {
    if (warned) return;
    warned = true;
    if (logger) logger.warn(MOUNT_ORDER_WARNING);
    else process.emitWarning(MOUNT_ORDER_WARNING, { code: 'SQLGATE_MOUNT_ORDER' });
  };
}

/**
 * Parses the JSON body of a POST route into `req.body`; other content types are refused (415).
 * A body already read by a parser before sqlgate is checked as far as what is left allows.
 */
export function jsonBody(limits: BodyLimits, warnMountOrder: () => void): RequestHandler {
  return (req, _res, next) => {
    const wrongType = contentTypeError(req);
    if (wrongType) {
      next(wrongType);
      return;
    }
    // The stream has been read: waiting for it again would never end.
    if (req.readableEnded) {
      warnMountOrder();
      const body = bodyReadBefore(req, limits.maxBytes);
      if (body instanceof BodyError) next(body);
      else {
        req.body = body;
        next();
      }
      return;
    }
    readJsonBody(req, limits).then((body) => {
      req.body = body;
      next();
    }, next);
  };
}

export const REPLACED_BYTES_MESSAGE =
  "The request body holds U+FFFD, which a body parser mounted before sqlgate puts in place of bytes that are not UTF-8: mount sqlgate before any body parser, e.g. app.use('/db', createApp(...)) before app.use(express.json()). Behind a parser, U+FFFD cannot be sent as it is";

const REPLACEMENT_CHARACTER = '\ufffd';

/**
 * The body a parser before sqlgate read. Its raw bytes, when the host keeps them (`req.rawBody`,
 * as body-parser's `verify` option can set it, or a raw parser's `req.body`), are parsed and
 * checked as sqlgate's own reader does. A text already decoded (a text parser's `req.body`) has
 * lost its invalid bytes to U+FFFD, and is refused if it holds one; escapes (`\ufffd`) are the
 * caller's and pass. Otherwise only the parsed value is left, which is refused if any of its
 * strings holds U+FFFD, and whose numbers may have been rounded already: see `doubtInParsed`.
 */
function bodyReadBefore(req: Request, maxBytes: number): unknown {
  const raw = rawTextOf(req);
  if (raw !== undefined) {
    const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
    if (bytes > maxBytes) return new BodyError(413, 'Request body too large');
    if (typeof raw !== 'string') return parsedBody([raw], raw.length);
    if (raw.includes(REPLACEMENT_CHARACTER)) return new BodyError(400, REPLACED_BYTES_MESSAGE);
    return parsedText(raw);
  }
  if (Number(req.headers['content-length']) > maxBytes) {
    return new BodyError(413, 'Request body too large');
  }
  return doubtInParsed(req.body) ?? req.body;
}

function rawTextOf(req: Request): Buffer | string | undefined {
  const { rawBody } = req as Request & { rawBody?: unknown };
  if (Buffer.isBuffer(rawBody) || typeof rawBody === 'string') return rawBody;
  const body = req.body as unknown;
  return Buffer.isBuffer(body) || typeof body === 'string' ? body : undefined;
}

/**
 * Why a value a parser made may not be what its caller sent, at the first place found: a string
 * or key holding U+FFFD, which the parser may have put in place of bytes that were not UTF-8, or
 * a number that is not finite (`1e400` parses to Infinity) or an integer past 2^53 - 1, where
 * doubles can no longer hold every integer (9007199254740993 arrives as 9007199254740992, which
 * looks like any other). A fraction that lost digits (`0.1000000000000000001` arrives as 0.1)
 * cannot be told from one sent so, and passes. Walked with a stack of its own: a deeply nested
 * value cannot overflow ours.
 */
function doubtInParsed(value: unknown): BodyError | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (next.includes(REPLACEMENT_CHARACTER)) return new BodyError(400, REPLACED_BYTES_MESSAGE);
    } else if (typeof next === 'number') {
      if (!Number.isFinite(next) || Math.abs(next) > Number.MAX_SAFE_INTEGER) {
        return new BodyError(
          400,
          `The number ${String(next)}, as a body parser before sqlgate read it, cannot be carried exactly by JSON; send it as a string`,
        );
      }
    } else if (typeof next === 'object' && next !== null) {
      // In reverse, so that the body's first doubt is the first found; one push per key and value,
      // since spreading an object of 100,000 keys into one call would overflow the stack.
      const entries = Array.isArray(next) ? (next as unknown[]) : Object.entries(next).flat();
      for (let i = entries.length - 1; i >= 0; i--) pending.push(entries[i]);
    }
  }
  return undefined;
}

/** The errors of body-parser (and raw-body), as their `type` names them, and sqlgate's answer. */
const HOST_PARSER_ERRORS = new Map<string, (message: string) => BodyError>([
  ['entity.too.large', () => new BodyError(413, 'Request body too large')],
  ['entity.parse.failed', () => new BodyError(400, 'Request body is not valid JSON')],
  ['request.aborted', () => new BodyError(400, 'Request body could not be read: aborted')],
  ['request.size.invalid', (message) => new BodyError(400, message)],
  ['encoding.unsupported', (message) => new BodyError(415, message)],
  ['charset.unsupported', (message) => new BodyError(415, message)],
]);

/** A body-parser error that sqlgate answers in its own JSON, or undefined for any other error. */
function hostParserRefusal(error: unknown): BodyError | undefined {
  const { type, message } = (error ?? {}) as { type?: unknown; message?: unknown };
  if (typeof type !== 'string') return undefined;
  return HOST_PARSER_ERRORS.get(type)?.(String(message));
}

/**
 * When the app is mounted (`host.use(path, app)`), adds an error handler to the host right after
 * it, for its path: a host's body parser that fails before sqlgate (a body over its limit, invalid
 * JSON) calls `next(error)` in the host's router, whose error handlers skip the mounted app, and
 * Express would answer an HTML page with a stack trace. Requests to sqlgate's path get sqlgate's
 * JSON error instead; every other error, and every other path, stays the host's.
 */
export function answerHostParserErrorsWhenMounted(
  app: Application,
  warnMountOrder: () => void,
): void {
  const answerHostParserError: ErrorRequestHandler = (error: unknown, req, res, next) => {
    const refusal = hostParserRefusal(error);
    if (refusal === undefined || res.headersSent) {
      next(error);
      return;
    }
    warnMountOrder();
    // What the parser left of the body is read and dropped when small, else the connection closes.
    if (closeOrDrainAfterEarlyAnswer(res)) res.setHeader('Connection', 'close');
    answerBodyError(res, refusal);
  };
  app.on('mount', (host: Application) => {
    host.use(app.mountpath, answerHostParserError);
  });
}
