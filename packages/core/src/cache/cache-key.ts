import { createHash } from 'node:crypto';
import type { RowMode } from '../ports/connections';

/** Everything that decides a statement's result, besides the data itself. */
export interface CacheKeyParts {
  /** Credential-scoped target (the pool key): one user never sees another user's cached rows. */
  scope: string;
  /**
   * The statement's normalised text (docs/decisions.md 10.9): statements differing only in comments
   * or whitespace share an entry (an optimizer hint changes the plan, not the rows).
   */
  text: string;
  params?: readonly unknown[];
  rowMode: RowMode;
  maxRows: number;
}

function hex(bytes: ArrayBufferView): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * A deterministic text for a parameter value, tagged with its kind so that values the driver sends
 * differently differ (JSON confuses a Date with its ISO string). Object keys keep their order.
 */
function encodeParam(value: unknown): string {
  if (value === null || value === undefined) return 'n'; // the driver sends both as NULL
  switch (typeof value) {
    case 'string':
      return `s${JSON.stringify(value)}`;
    case 'number':
      return `d${String(value)}`;
    case 'bigint':
      return `i${value.toString()}`;
    case 'boolean':
      return value ? 't' : 'f';
    case 'object':
      if (Array.isArray(value)) return `[${value.map(encodeParam).join(',')}]`;
      if (value instanceof Date) return `D${value.getTime()}`;
      if (ArrayBuffer.isView(value)) return `x${hex(value)}`;
      // Throws like the driver would (cycles, nested bigint): such a request cannot run either.
      return `o${JSON.stringify(value)}`;
    default:
      // Functions and symbols have no SQL value; keyed by kind so they never match a real value.
      return `?${typeof value}`;
  }
}

/** Keys up to this length are used as they are; longer ones are hashed. */
const LONGEST_PLAIN_KEY = 512;

/**
 * The cache key of a statement: its scope, text, parameters, row mode and row limit. Long keys
 * become a SHA-256; a plain key is a JSON array starting with '[', which a digest never does.
 */
export function cacheKey(parts: CacheKeyParts): string {
  // JSON.stringify of the array quotes and separates every part, so no two tuples share a text.
  const material = JSON.stringify([
    parts.scope,
    parts.text,
    parts.rowMode,
    parts.maxRows,
    parts.params === undefined ? null : parts.params.map(encodeParam),
  ]);
  if (material.length <= LONGEST_PLAIN_KEY) return material;
  return createHash('sha256').update(material).digest('hex');
}
