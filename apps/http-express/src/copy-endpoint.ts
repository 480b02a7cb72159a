/**
 * POST /api/copy (docs/decisions.md 10.23): a multipart/form-data upload of exactly two parts, in
 * this order: `request`, a POST /api/query body holding one COPY ... FROM STDIN, and `data`, streamed
 * into PostgreSQL as it arrives (busboy parses the multipart stream without buffering it). The
 * COPY ends (CopyDone) only once the whole body has been read and found well formed; anything
 * wrong with it (a third part, a cut body, no data moving for BODY_TIMEOUT_MS, more than
 * MAX_COPY_BYTES) fails the COPY, which loads nothing. The answer is the one-statement answer of a
 * query: `{command: 'COPY', rowCount, executionTime, ...}`, or the error.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { withFields, type ExecuteOptions, type QueryService } from '@sqlgate/core';
import busboy from 'busboy';
import type { Logger } from 'pino';
import { executeOptionsOf, writeAnswer, writeInternalError, writeJson } from './query-endpoint';
import { streamOpened } from './server-v8-settings';
import { codingError, parsingLossRefusal } from './json-body';
import { continueIfAsked } from './continue-on-read';
import { abortOnDisconnect } from './disconnect-signal';
import { readQueryBody } from './contract';
import { readAdmitted, type Access } from './access/admission';

/** Largest `request` part (and `data` sent as a plain field): a query body, as on POST /api/query. */
const MAX_FIELD_BYTES = 1024 * 1024;

export interface CopyLimits {
  /** Bytes the `data` part may hold (MAX_COPY_BYTES). */
  maxCopyBytes: number;
  /** The upload fails when no data moves for this long (BODY_TIMEOUT_MS). */
  idleTimeoutMs: number;
}

/** Why an upload was refused, with the status that says so. */
class UploadRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The data part, counted; it ends only once the whole multipart body was read well formed
 * (`bodyRead`), so that a malformed ending fails the COPY rather than committing it.
 */
async function* checkedData(
  data: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  maxBytes: number,
  bodyRead: Promise<void>,
  refused: (error: UploadRefused) => void,
): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of data) {
    total += chunk.length;
    if (total > maxBytes) {
      const error = new UploadRefused(
        413,
        `The data is larger than MAX_COPY_BYTES (${maxBytes} bytes)`,
      );
      refused(error);
      throw error;
    }
    yield chunk;
  }
  await bodyRead;
}

/** A part's text, refused unless it is valid UTF-8 (busboy hands it over as latin1 bytes). */
function utf8Text(latin1: string, part: string): string {
  const bytes = Buffer.from(latin1, 'latin1');
  if (!isUtf8(bytes)) throw new UploadRefused(400, `The '${part}' part is not valid UTF-8`);
  return bytes.toString('utf8');
}

/** A part's Content-Transfer-Encoding that leaves its bytes as they are (RFC 2045 6.1). */
const IDENTITY_ENCODINGS = new Set(['7bit', '8bit', 'binary']);

/**
 * A part whose bytes are encoded (base64, quoted-printable) would be loaded as its encoded text:
 * refused, as a compressed body is (415).
 */
function transferEncodingRefusal(part: string, encoding: string): UploadRefused | undefined {
  if (IDENTITY_ENCODINGS.has(encoding.toLowerCase())) return undefined;
  return new UploadRefused(
    415,
    `The '${part.slice(0, 40)}' part's Content-Transfer-Encoding '${encoding.slice(0, 40)}' is not supported; send its bytes as they are`,
  );
}

/** Answers a refused upload. */
function refuse(res: ServerResponse, status: number, error: string): void {
  if (res.headersSent || res.destroyed) return;
  // An answer before the upload ended: its rest is read and dropped (answer-headers.ts).
  writeJson(res, status, JSON.stringify({ error }));
}

export function answerCopy(
  service: QueryService,
  logger: Logger,
  limits: CopyLimits,
  req: IncomingMessage,
  res: ServerResponse,
  access: Access,
): void {
  const parts = multipartParserFor(req, res);
  if (!parts) return;
  // The COPY stops (core cancels it) when the client goes away, as any request does, and when
  // the upload is given up.
  const stopCopy = abortOnDisconnect(res);
  const watched = withFields(executeOptionsOf(res), { signal: stopCopy });
  // An upload is a stream (docs/decisions.md 10.24): until the answer is gone.
  res.once('close', streamOpened());
  const upload = new CopyUpload({
    service,
    logger,
    limits,
    req,
    res,
    stopCopy,
    watched,
    parts,
    access,
  });
  upload.listen();
  continueIfAsked(req);
  req.pipe(parts);
}

/** The multipart parser of an upload, or undefined when the upload was refused (answered). */
function multipartParserFor(req: IncomingMessage, res: ServerResponse): busboy.Busboy | undefined {
  if (!/^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '')) {
    refuse(res, 415, 'POST /api/copy takes multipart/form-data: a request part, then a data part');
    return undefined;
  }
  const wrongCoding = codingError(req);
  if (wrongCoding) {
    refuse(res, wrongCoding.status, wrongCoding.message);
    return undefined;
  }
  try {
    return busboy({
      headers: req.headers,
      // Latin1 keeps every byte: the text is checked as UTF-8 here, never decoded with
      // replacement characters.
      defCharset: 'latin1',
      // One more of each than allowed: the handlers below refuse the extra part by name, so a
      // third part fails the COPY however it comes.
      limits: { fields: 3, files: 2, parts: 3, fieldSize: MAX_FIELD_BYTES },
    });
  } catch {
    refuse(res, 400, 'The multipart body has no boundary');
    return undefined;
  }
}

interface UploadContext {
  service: QueryService;
  logger: Logger;
  limits: CopyLimits;
  /** Where a `request` part naming no target runs (docs/decisions.md 10.48). */
  /** Who may run what (docs/decisions.md 12): the request part is admitted before the COPY starts. */
  access: Access;
  req: IncomingMessage;
  res: ServerResponse;
  /** Stops the COPY: the client went away or the upload was given up. */
  stopCopy: ReturnType<typeof abortOnDisconnect>;
  /** The COPY's execute options. */
  watched: ExecuteOptions;
  parts: busboy.Busboy;
}

/** One upload, from its first part to its answer. */
class CopyUpload {
  private body: unknown;
  private data: Readable | undefined;
  private started = false;
  private failure: UploadRefused | undefined;
  /** Settles when the whole body has been read: resolved when well formed, rejected otherwise. */
  private readonly bodyRead: Promise<void>;
  private bodyDone!: () => void;
  private bodyFailed!: (error: UploadRefused) => void;

  constructor(private readonly context: UploadContext) {
    this.bodyRead = new Promise<void>((resolve, reject) => {
      this.bodyDone = resolve;
      this.bodyFailed = reject;
    });
    this.bodyRead.catch(() => undefined);
  }

  /** Watches the upload's pace, then its parts. */
  listen(): void {
    this.watchIdle();
    const { parts } = this.context;
    parts.on('field', (name, value, info) => this.onField(name, value, info));
    parts.on('file', (name, stream: Readable, info) => this.onFile(name, stream, info.encoding));
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      parts.on(limit, () =>
        this.fail(
          new UploadRefused(400, "The body must hold exactly two parts: 'request', then 'data'"),
        ),
      );
    }
    parts.on('close', () => {
      if (!this.started) {
        this.fail(new UploadRefused(400, "The upload has no 'data' part"));
        return;
      }
      // The body is read: what remains is the server's work, under the statement's own timeout.
      this.stopIdleTimer();
      this.bodyDone();
    });
    parts.on('error', () =>
      this.fail(new UploadRefused(400, 'The multipart body could not be read')),
    );
  }

  /**
   * No data moving for BODY_TIMEOUT_MS while the body is read (a stalled client, a frozen server
   * that reads nothing, a COPY waiting on a lock that takes nothing) ends the upload: answered 408
   * at once, since PostgreSQL may never take the data and the COPY may never fail by itself; the
   * COPY, if it began, is cancelled and fails without CopyDone, so nothing is loaded. Once the
   * body is read, the statement's own timeoutMs rules.
   */
  private watchIdle(): void {
    const { req, res, limits } = this.context;
    req.socket.setTimeout(limits.idleTimeoutMs);
    // On the request, not the socket: Node's server destroys a timed-out socket unless the request
    // (or the response, or the server) listens for 'timeout', which would leave no room for the
    // 408.
    req.once('timeout', this.onIdle);
    req.once('end', this.stopIdleTimer);
    res.once('close', this.stopIdleTimer);
  }

  private readonly onIdle = (): void => {
    const { req, res, limits, stopCopy } = this.context;
    // The connection closes after the answer: the rest of the body will not come.
    res.setHeader('connection', 'close');
    res.once('finish', () => req.socket.destroy());
    const stalled = new UploadRefused(408, `No data moved for ${limits.idleTimeoutMs} ms`);
    this.fail(stalled);
    refuse(res, stalled.status, stalled.message);
    stopCopy.abort();
  };

  /**
   * Once the whole body is read the statement's own time rules, so the socket's timeout goes. Once
   * the answer has finished (a refusal may leave before the body), the socket's timeout is Node's
   * keep-alive timeout and must stay: without it an idle connection would stay open for ever.
   */
  private readonly stopIdleTimer = (): void => {
    const { req, res } = this.context;
    req.off('timeout', this.onIdle);
    req.off('end', this.stopIdleTimer);
    if (!res.writableFinished) req.socket.setTimeout(0);
  };

  private fail(error: UploadRefused): void {
    this.failure ??= error;
    this.bodyFailed(error);
    // A COPY under way fails now (CopyFail): the data part will receive nothing more.
    this.data?.destroy(error);
    if (!this.started) refuse(this.context.res, error.status, error.message);
    this.context.req.unpipe(this.context.parts);
  }

  /** Starts the COPY with the data part; false when it cannot start. */
  private start(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): boolean {
    // After a refusal nothing starts: the parser may still hand over parts it already holds.
    if (this.failure) return false;
    if (this.started || this.body === undefined) {
      this.fail(new UploadRefused(400, "Send the 'request' part first, then one 'data' part"));
      return false;
    }
    this.started = true;
    const { service, logger, limits, req, res, parts, watched, access } = this.context;
    const source = checkedData(chunks, limits.maxCopyBytes, this.bodyRead, (error) => {
      this.failure ??= error;
    });
    const body = this.body;
    Promise.resolve(access.admit(req, res, body))
      .then((admission) =>
        service.copyFrom(readAdmitted(admission, readQueryBody), source, watched),
      )
      .then((response) => {
        this.stopIdleTimer();
        if (this.failure) {
          refuse(res, this.failure.status, this.failure.message);
          return;
        }
        // An answer before the upload ended (a refused row): the rest is read and dropped as the
        // answer is written (answer-headers.ts).
        req.unpipe(parts);
        writeAnswer(res, logger, response);
      })
      .catch((defect: unknown) => {
        if (!res.headersSent) writeInternalError(res, logger, defect);
        else res.destroy();
      });
    return true;
  }

  private onField(
    name: string,
    value: string,
    info: { encoding: string; valueTruncated: boolean },
  ): void {
    try {
      const encodingRefused = transferEncodingRefusal(name, info.encoding);
      if (encodingRefused) throw encodingRefused;
      if (info.valueTruncated) {
        throw new UploadRefused(413, `The '${name}' part is larger than ${MAX_FIELD_BYTES} bytes`);
      }
      if (name === 'data') {
        // Data sent as a plain field (a browser's FormData.append('data', text)).
        this.start([Buffer.from(value, 'latin1')]);
        return;
      }
      if (name !== 'request' || this.body !== undefined) {
        throw new UploadRefused(400, "The parts must be 'request', then 'data'");
      }
      this.body = requestPartBody(value);
    } catch (error) {
      this.fail(error instanceof UploadRefused ? error : new UploadRefused(400, String(error)));
    }
  }

  private onFile(name: string, stream: Readable, encoding: string): void {
    // An error of the part's stream (a body cut inside it) reaches the COPY through reading it;
    // without a listener it would end the process.
    stream.on('error', () => undefined);
    if (name !== 'data') {
      stream.resume();
      this.fail(new UploadRefused(400, "The parts must be 'request', then 'data'"));
      return;
    }
    const encodingRefused = transferEncodingRefusal(name, encoding);
    if (encodingRefused) {
      stream.resume();
      this.fail(encodingRefused);
      return;
    }
    if (!this.start(stream as AsyncIterable<Uint8Array>)) {
      stream.resume();
      return;
    }
    this.data = stream;
    const { req } = this.context;
    req.once('close', () => {
      if (!req.complete) stream.destroy(new Error('the client went away during the upload'));
    });
  }
}

/** The `request` part's JSON, checked as any JSON body is (docs/decisions.md 10.8). */
function requestPartBody(latin1: string): unknown {
  const text = utf8Text(latin1, 'request');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new UploadRefused(400, "The 'request' part is not valid JSON");
  }
  // As for any JSON body: a key given twice is refused, and so is a number parsing changed in a
  // field sqlgate reads (10.8).
  const refusal = parsingLossRefusal(text, body);
  if (refusal !== undefined) throw new UploadRefused(400, refusal);
  return body;
}
