/**
 * Reads a JSON request body with a byte limit and a time limit. Smaller than body-parser because it
 * needs to be: UTF-8 JSON only, no compression, and it runs on the hot path of every query.
 */
import { isUtf8 } from 'node:buffer';
import {
  duplicateKeyMessage,
  inexactNumberMessage,
  lostInParsing,
  keepInexactNumbers,
} from './json-text';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setAnswerHeader } from './answer-headers';
import { bodyDeadlinesFor } from './body-deadlines';
import { continueIfAsked } from './continue-on-read';
import { writeJson } from './query-endpoint';

/** A body that cannot be accepted; `status` is the HTTP answer. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 408 | 413 | 415 | 501,
    message: string,
  ) {
    super(message);
  }
}

export interface BodyLimits {
  /** Largest accepted body in bytes (MAX_BODY_BYTES). */
  maxBytes: number;
  /** Time the whole body may take to arrive, from when reading starts (BODY_TIMEOUT_MS). */
  timeoutMs: number;
}

export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

const TOO_LARGE = 'Request body too large';

/**
 * Refuses every body that is not declared `application/json` (parameters allowed; a charset must be
 * UTF-8). A web page may POST `text/plain` or a form to any address without a CORS preflight;
 * `application/json` needs one, which the Origin check then refuses (docs/decisions.md 10.16).
 */
export function contentTypeError(req: IncomingMessage): BodyError | undefined {
  const header = req.headers['content-type'];
  if (header === 'application/json') return undefined; // what nearly every client sends
  const [mediaType = '', ...parameters] = (header ?? '').split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') {
    return new BodyError(
      415,
      header === undefined
        ? 'Content-Type must be application/json'
        : `Content-Type must be application/json, got '${header.slice(0, 100)}'`,
    );
  }
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    const charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
    if (name.trim().toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      return new BodyError(
        415,
        `Content-Type must be application/json in UTF-8, got '${(header ?? '').slice(0, 100)}'`,
      );
    }
  }
  return undefined;
}

/**
 * Refuses a body whose bytes are not the body itself: compressed (Content-Encoding, 415), or sent
 * with a transfer coding other than chunked (501, as RFC 9112 asks). Node's parser takes the
 * chunks apart and passes any other coding through as it is: a gzip body would be read as text.
 */
export function codingError(req: IncomingMessage): BodyError | undefined {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && !onlyCodings(encoding, 'identity')) {
    return new BodyError(415, `Content-Encoding '${encoding.slice(0, 100)}' is not supported`);
  }
  const transfer = req.headers['transfer-encoding'];
  if (transfer === undefined || onlyCodings(transfer, 'chunked')) return undefined;
  return new BodyError(
    501,
    `Transfer-Encoding '${transfer.slice(0, 100)}' is not supported; send the body as it is or chunked`,
  );
}

/** Whether a list of codings (names are case-insensitive, empty entries nothing) holds only `name`. */
function onlyCodings(list: string, name: string): boolean {
  if (list === name) return true; // what nearly every client sends
  return list.split(',').every((coding) => {
    const trimmed = coding.trim().toLowerCase();
    return trimmed === '' || trimmed === name;
  });
}

/**
 * Resolves to the parsed body, or undefined when there is none. Rejects with BodyError: 415 for a
 * Content-Type other than JSON or a compressed body, 413 past `maxBytes`, 408 when the body has not
 * fully arrived within `timeoutMs` (a client dribbling bytes would otherwise hold the socket until
 * Node's request timeout), 400 for a broken stream or invalid JSON.
 */
export function readJsonBody(req: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const wrongType = contentTypeError(req);
  if (wrongType) {
    req.resume();
    return Promise.reject(wrongType);
  }
  return readJsonText(req, limits);
}

/**
 * `readJsonBody` whatever media type the body declares: for POST /sql, whose Neon driver sends
 * `text/plain` and whose required Neon-Connection-String header makes a web page's request need a
 * CORS preflight anyway (docs/decisions.md 10.16).
 */
export function readJsonText(req: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const wrongCoding = codingError(req);
  if (wrongCoding) {
    req.resume();
    return Promise.reject(wrongCoding);
  }
  const { maxBytes: limit, timeoutMs } = limits;
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    return Promise.reject(new BodyError(413, TOO_LARGE));
  }
  // A pipelined request whose connection ended before its turn (pipelined-requests.ts).
  if (req.destroyed) {
    return Promise.reject(new BodyError(400, 'Request body could not be read: aborted'));
  }
  continueIfAsked(req);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const fail = (error: BodyError): void => {
      if (settled) return;
      settled = true;
      stopWatching();
      reject(error);
    };
    const stopWatching = bodyDeadlinesFor(timeoutMs).watch(() =>
      fail(new BodyError(408, `Request body not received within ${timeoutMs} ms`)),
    );
    // `on` for every event: each happens once or is ignored once the read settled, and `once`
    // would wrap each listener and remove it again on every request.
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      length += chunk.length;
      if (length > limit) {
        fail(new BodyError(413, TOO_LARGE));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (error) => {
      fail(new BodyError(400, `Request body could not be read: ${error.message}`));
    });
    req.on('close', () => {
      if (!req.complete) fail(new BodyError(400, 'Request body could not be read: aborted'));
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      stopWatching();
      const body = length === 0 ? undefined : parsedBody(chunks, length);
      if (body instanceof BodyError) reject(body);
      else resolve(body);
    });
  });
}

/** The JSON value of a whole body, or why it is refused (400). */
export function parsedBody(chunks: Buffer[], length: number): unknown {
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length);
  // Decoding would replace invalid bytes with U+FFFD: the SQL would change silently.
  if (!isUtf8(bytes)) return new BodyError(400, 'Request body is not valid UTF-8');
  return parsedText(bytes.toString('utf8'));
}

/** The JSON value of a body's text, or why it is refused (400). */
export function parsedText(text: string): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new BodyError(400, 'Request body is not valid JSON');
  }
  const refusal = parsingLossRefusal(text, body);
  return refusal === undefined ? body : new BodyError(400, refusal);
}

/**
 * The refusal of what parsing `text` into `body` lost (docs/decisions.md 10.8), or undefined: a key
 * given twice; a number parsing changed, when the body is no object of fields. An object's changed
 * numbers are kept with it for the reader of its fields, which refuses those in fields it reads.
 */
export function parsingLossRefusal(text: string, body: unknown): string | undefined {
  const lost = lostInParsing(text);
  if (lost === undefined) return undefined;
  if (lost.duplicateKey !== undefined) return duplicateKeyMessage(lost.duplicateKey);
  const [first] = lost.inexactNumbers;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return first && inexactNumberMessage(first);
  }
  keepInexactNumbers(body, lost.inexactNumbers);
  return undefined;
}

/**
 * Answers a refused body. After a 408 the connection is closed: the client is still sending the
 * body, so the socket cannot carry another request, and keeping it would keep the slow client.
 */
export function answerBodyError(res: ServerResponse, error: BodyError): void {
  if (error.status === 408) setAnswerHeader(res, 'Connection', 'close');
  writeJson(res, error.status, JSON.stringify({ error: error.message }));
}
