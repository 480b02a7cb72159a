/**
 * POST /api/query with `Accept: application/x-ndjson` or `text/csv` (docs/decisions.md 10.22):
 * the answer is written while rows arrive. A request that fails before its first statement begins
 * is answered as usual, JSON with its status; once streaming began the status is 200 and a failure
 * travels in-band (NDJSON) or cuts the response (CSV, which has no room for it). Writing waits
 * for the client: a slow reader holds the rows in PostgreSQL, not here.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { QueryService } from '@sqlgate/core';
import type { Logger } from 'pino';
import { abortOnDisconnect, writeAnswer } from './query-endpoint';
import { csvText, ndjsonLines, STREAM_CONTENT_TYPES, type StreamFormat } from './stream-formats';

export async function answerStreamed(
  service: QueryService,
  logger: Logger,
  body: unknown,
  format: StreamFormat,
  res: ServerResponse,
): Promise<void> {
  const signal = abortOnDisconnect(res);
  const answer = await service.stream(
    body,
    format === 'csv' ? { signal, oneStatement: true, values: 'text' } : { signal },
  );
  if (!answer.streamed) {
    writeAnswer(res, logger, answer.response);
    return;
  }
  res.writeHead(200, { 'Content-Type': STREAM_CONTENT_TYPES[format], 'Cache-Control': 'no-store' });
  for await (const event of answer.events) {
    const text = format === 'csv' ? csvText(event) : ndjsonLines(event);
    if (text === null) {
      // CSV cannot say that the statement failed: the response is cut, never ended.
      res.destroy();
      return;
    }
    if (text !== '' && !res.write(text)) await drained(res);
    if (res.destroyed) return;
  }
  res.end();
}

/** Resolves when the client has taken what was written, or has gone away. */
async function drained(res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  await Promise.race([
    once(res, 'drain', { signal: controller.signal }),
    once(res, 'close', { signal: controller.signal }),
  ]).catch(() => undefined);
  controller.abort();
}
