import { createHash } from 'node:crypto';
import type { RowMode } from '../ports/connections';

/** Everything that decides a statement's result, besides the data itself. */
export interface CacheKeyParts {
  /** Credential-scoped target (the pool key): one user never sees another user's cached rows. */
  scope: string;
  /**
   * The statement's normalised text, not the text that ran (docs/decisions.md 10.9): statements
   * that differ only in comments or whitespace share an entry. A comment can be an optimizer hint
   * (`/*+ SeqScan(t) *\/`), which changes the plan but not the rows, so sharing is right; where
   * the plan would change only the order of an unordered result, either order is correct.
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
 * A deterministic text for a parameter value that tells apart every pair of values the driver
 * could send differently. Plain JSON is not enough for library callers: it throws on bigint and
 * writes a Buffer and a look-alike object, or a Date and its ISO string, the same way. Each value
 * is therefore tagged with its kind. Object keys keep their order: the driver sends objects as
 * `JSON.stringify` does, and a `json` column or cast preserves that order in the result.
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
 * The cache key of a statement: its scope, text, parameters, row mode and row limit. Short keys
 * are kept as they are (hashing would cost more than it saves on every lookup); longer ones become
 * a SHA-256, so keys stay short however long the SQL is. A plain key is a JSON array and starts
 * with '[', a digest never does, so the two kinds cannot collide. The scope is stored beside each
 * entry, so invalidation per target does not need to read it back from the key.
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
