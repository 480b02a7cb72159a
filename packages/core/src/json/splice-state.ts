/**
 * The one serialisation in progress. JSON.stringify is synchronous and RawJson.toJSON cannot be
 * given context, so the serializer publishes where held texts go for the length of one call.
 */
import { randomBytes } from 'node:crypto';

/**
 * What every RawJson writes during JSON.stringify: the same string each time, since JSON.stringify
 * writes values in the order it calls toJSON. The per-process nonce is never sent, so a caller
 * cannot write a string that reads as a placeholder.
 */
export const PLACEHOLDER = `raw-json-${randomBytes(12).toString('hex')}`;

/**
 * The texts held by the serialisation in progress, in the order their placeholders were written;
 * null outside one. A plain field rather than a function: toJSON reads it once per RawJson.
 */
export const splice: { texts: string[] | null } = { texts: null };

/** Runs `serialize` collecting texts into `texts`; restores the previous collection afterwards. */
export function withSplice<T>(texts: string[], serialize: () => T): T {
  const previous = splice.texts;
  splice.texts = texts;
  try {
    return serialize();
  } finally {
    splice.texts = previous;
  }
}
