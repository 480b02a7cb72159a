/**
 * Reads a JSON request body with a byte limit. Smaller than body-parser because it needs to be:
 * UTF-8 JSON only, no compression, and it runs on the hot path of every query.
 */
import type { IncomingMessage } from 'node:http';

/** A body that cannot be accepted; `status` is the HTTP answer. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

const TOO_LARGE = 'Request body too large';

/** Resolves to the parsed body, or undefined when there is none. Rejects with BodyError. */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    req.resume();
    return Promise.reject(new BodyError(415, `Content-Encoding '${encoding}' is not supported`));
  }
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    return Promise.reject(new BodyError(413, TOO_LARGE));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      length += chunk.length;
      if (length > limit) {
        failed = true;
        reject(new BodyError(413, TOO_LARGE));
        return;
      }
      chunks.push(chunk);
    });
    req.once('error', (error) => {
      failed = true;
      reject(new BodyError(400, `Request body could not be read: ${error.message}`));
    });
    req.once('end', () => {
      if (failed) return;
      if (length === 0) {
        resolve(undefined);
        return;
      }
      const text = (
        chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length)
      ).toString('utf8');
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new BodyError(400, 'Request body is not valid JSON'));
      }
    });
  });
}
