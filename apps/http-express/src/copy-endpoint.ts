/**
 * POST /api/copy (docs/decisions.md 10.23): a multipart/form-data upload whose first part,
 * `request`, is a POST /api/query body holding one COPY ... FROM STDIN, and whose second part,
 * `data`, is streamed into PostgreSQL as it arrives (busboy parses the multipart stream without
 * buffering it). The answer is the one-statement answer of a query: `{command: 'COPY', rowCount,
 * executionTime, ...}`, or the error that made the COPY load nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { QueryService } from '@sqlgate/core';
import busboy from 'busboy';
import type { Logger } from 'pino';
import { abortOnDisconnect, writeAnswer, writeInternalError, writeJson } from './query-endpoint';

/** Largest `request` part: a query body, as MAX_BODY_BYTES bounds it on POST /api/query. */
const MAX_REQUEST_PART_BYTES = 1024 * 1024;

export interface CopyLimits {
  /** Bytes the `data` part may hold (MAX_COPY_BYTES). */
  maxCopyBytes: number;
}

/** The data part, counted: past `maxBytes` the source fails, which fails the COPY. */
async function* limited(
  stream: Readable,
  maxBytes: number,
  exceeded: () => void,
): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      exceeded();
      throw new Error(`the data is larger than MAX_COPY_BYTES (${maxBytes} bytes)`);
    }
    yield chunk;
  }
}

function refuse(res: ServerResponse, status: number, error: string): void {
  if (res.headersSent) return;
  // The rest of the upload is not read: the connection closes after the answer.
  res.setHeader('Connection', 'close');
  writeJson(res, status, JSON.stringify({ error }));
}

export function answerCopy(
  service: QueryService,
  logger: Logger,
  limits: CopyLimits,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  if (!/^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '')) {
    req.resume();
    refuse(res, 415, 'POST /api/copy takes multipart/form-data: a request part, then a data part');
    return;
  }
  let parts: busboy.Busboy;
  try {
    parts = busboy({
      headers: req.headers,
      limits: { fields: 1, files: 1, parts: 2, fieldSize: MAX_REQUEST_PART_BYTES },
    });
  } catch {
    req.resume();
    refuse(res, 400, 'The multipart body has no boundary');
    return;
  }
  const signal = abortOnDisconnect(res);
  let body: unknown;
  let bodyError: string | undefined;
  let copying = false;
  parts.on('field', (name, value, info) => {
    if (name !== 'request' || info.valueTruncated) {
      bodyError = `The first part must be 'request', a JSON body of at most ${MAX_REQUEST_PART_BYTES} bytes`;
      return;
    }
    try {
      body = JSON.parse(value);
    } catch {
      bodyError = "The 'request' part is not valid JSON";
    }
  });
  parts.on('file', (name, stream) => {
    if (copying || name !== 'data' || body === undefined || bodyError !== undefined) {
      stream.resume();
      refuse(res, 400, bodyError ?? "Send the 'request' part first, then one 'data' part");
      req.unpipe(parts);
      return;
    }
    copying = true;
    // A client that goes away mid-upload fails the COPY at once (CopyFail): PostgreSQL cannot
    // cancel a COPY that waits for data, and the multipart parser would wait for ever.
    req.once('close', () => {
      if (!req.complete) stream.destroy(new Error('the client went away during the upload'));
    });
    let tooLarge = false;
    const source = limited(stream, limits.maxCopyBytes, () => (tooLarge = true));
    service.copyFrom(body, source, { signal }).then(
      (response) => {
        if (tooLarge) {
          refuse(res, 413, `The data is larger than MAX_COPY_BYTES (${limits.maxCopyBytes} bytes)`);
          return;
        }
        // An answer before the upload ended (a refused row): the rest is not read.
        if (!req.complete) res.setHeader('Connection', 'close');
        writeAnswer(res, logger, response);
      },
      (defect: unknown) => {
        if (!res.headersSent) writeInternalError(res, logger, defect);
      },
    );
  });
  parts.on('close', () => {
    if (!copying) refuse(res, 400, bodyError ?? "The upload has no 'data' part");
  });
  parts.on('error', () => {
    if (!copying) refuse(res, 400, 'The multipart body could not be read');
  });
  req.pipe(parts);
}
