/**
 * POST /api/query answers that are written while they are produced (docs/decisions.md 10.22): rows
 * as NDJSON or CSV when the Accept header asks for them, and the data of a lone COPY ... TO STDOUT
 * whatever it asks. A request that fails before its first statement begins is answered as usual,
 * JSON with its status; once streaming began the status is 200 and a failure travels in-band
 * (NDJSON) or cuts the response (CSV and COPY data have no room for it). Writing waits for the
 * client: a slow reader holds the rows in PostgreSQL, not here.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { QueryStream, StreamEvent, StreamRoute } from '@sqlgate/core';
import type { Logger } from 'pino';
import { csvText, ndjsonLines, STREAM_CONTENT_TYPES, type StreamFormat } from './stream-formats';
import { answerHeader, CONSISTENCY_TOKEN, writeAnswerHead } from './answer-headers';
import { copyContentType } from './copy-media-types';
import { cutAnswer, giveUpAnswer } from './cut-answers';
import { streamOpened } from './server-v8-settings';
import type { HttpRequestObserver } from './observability/request-observation';

/** A COPY's answer is its data alone; a failure cannot be written in it. */
function copyBytes(event: StreamEvent): Uint8Array | string | null {
  if (event.type === 'copy') return event.data;
  return event.type === 'error' ? null : '';
}

/**
 * Writes a streamed answer: rows in `format`, or a COPY's data (`format` is then whatever the
 * client asked for, and does not matter). A client that takes nothing for `stallLimitMs` is cut
 * off (answer-stall.ts).
 */
export async function writeStream(
  res: ServerResponse,
  logger: Logger,
  answer: Extract<QueryStream, { streamed: true }>,
  format: StreamFormat | undefined,
  stallLimitMs: number,
  observer?: HttpRequestObserver,
): Promise<void> {
  const written: Written = { rows: 0, bytes: 0, countBytes: observer !== undefined };
  const streamClosed = streamOpened();
  try {
    await writeEvents(res, logger, answer, format, stallLimitMs, written);
  } finally {
    streamClosed();
    // Whole or cut, what was written counts (metrics of streamed rows and bytes).
    observer?.streamed(answer.copy ? 'copy' : (format ?? 'ndjson'), written.rows, written.bytes);
  }
}

/** Rows and bytes written so far; bytes are counted only when someone watches. */
interface Written {
  rows: number;
  bytes: number;
  countBytes: boolean;
}

async function writeEvents(
  res: ServerResponse,
  logger: Logger,
  answer: Extract<QueryStream, { streamed: true }>,
  format: StreamFormat | undefined,
  stallLimitMs: number,
  written: Written,
): Promise<void> {
  const { copy } = answer;
  // HTTP trailers need chunked encoding, which an HTTP/1.0 answer does not have.
  const route =
    answer.route && !sendsTrailers(res) ? { ...answer.route, mayHaveWritten: false } : answer.route;
  const contentType = copy ? copyContentType(copy) : STREAM_CONTENT_TYPES[format ?? 'ndjson'];
  writeAnswerHead(res, 200, {
    'Content-Type': contentType,
    'Cache-Control': 'no-store',
    ...(route ? routeHeaders(route) : {}),
  });
  // The status line goes now: an answer cut later still reaches the client as a cut 200.
  res.flushHeaders();
  let complete = false;
  for await (const event of answer.events) {
    if (event.type === 'done') {
      complete = true;
      if (event.consistencyToken !== undefined && route?.mayHaveWritten === true) {
        res.addTrailers({ [CONSISTENCY_TOKEN]: event.consistencyToken });
      }
    }
    if (event.type === 'error' && event.internal !== undefined) {
      logger.error(
        { reqId: answerHeader(res, 'X-Request-Id'), err: event.internal },
        'internal error',
      );
    }
    const chunk = copy ? copyBytes(event) : format === 'csv' ? csvText(event) : ndjsonLines(event);
    if (chunk === null) {
      // CSV and COPY data cannot say that the statement failed: the response is cut, never ended.
      cutAnswer(res);
      return;
    }
    if (event.type === 'rows') written.rows += event.rows.length;
    if (chunk.length === 0) continue;
    if (written.countBytes) {
      written.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    }
    if (!res.write(chunk)) await drained(res, stallLimitMs);
    if (res.destroyed) return;
  }
  // Without `done` the answer is not whole (a defect ended it): cut, so no client takes it as complete.
  if (complete) res.end();
  else cutAnswer(res);
}

/** Whether the answer can end with HTTP trailers: chunked, so HTTP/1.1 or later. */
function sendsTrailers(res: ServerResponse): boolean {
  const { httpVersionMajor, httpVersionMinor } = res.req;
  return httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor >= 1);
}

/**
 * A streamed answer's head on a connection with replicas (docs/decisions.md 13): where it runs, in
 * `Server-Timing` as for a whole answer; and for a request that may write, that its consistency
 * token comes after the rows, as an HTTP trailer (and in NDJSON's `done` line), since it is read
 * after the commit.
 */
function routeHeaders(route: StreamRoute): Record<string, string> {
  const headers: Record<string, string> = { 'Server-Timing': `served;desc=${route.servedBy}` };
  if (route.mayHaveWritten) headers.Trailer = CONSISTENCY_TOKEN;
  return headers;
}

/**
 * Resolves when the client has taken what was written, or has gone away. A client that takes
 * nothing for `stallLimitMs` is given up (and logged so, not as a client that left): its
 * statement is cancelled and its connection goes back to the pool, instead of being held for as
 * long as the client likes.
 */
async function drained(res: ServerResponse, stallLimitMs: number): Promise<void> {
  const controller = new AbortController();
  const stalled = setTimeout(() => giveUpAnswer(res), stallLimitMs);
  await Promise.race([
    once(res, 'drain', { signal: controller.signal }),
    once(res, 'close', { signal: controller.signal }),
  ]).catch(() => undefined);
  clearTimeout(stalled);
  controller.abort();
}
