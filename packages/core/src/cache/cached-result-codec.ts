/**
 * A cache entry as text for stores outside the process (Redis), and back. Plain JSON would lose
 * RawJson (docs/decisions.md 10.13), `-0` and Dates, so values JSON has no form for are tagged
 * objects, `{"$": tag, "v": value}`:
 *
 * | tag | value                                                     |
 * | --- | --------------------------------------------------------- |
 * | `j` | a RawJson, `v` its text                                   |
 * | `d` | a Date, `v` its time in milliseconds (null: invalid date) |
 * | `n` | a number JSON cannot write: `-0`, `NaN`, `Infinity`...    |
 * | `i` | a bigint, `v` its decimal text                            |
 * | `b` | a Buffer, `v` its bytes in base64                         |
 *
 * Other objects are written as JSON does, each own key starting with `$` given one more `$`, so a
 * row is never mistaken for a tag. Values JSON changes (undefined, a Map, `toJSON`) decode
 * differently, but `serializeResponse` writes the same text for them.
 */
import { RawJson } from '../json/raw-json';
import type { CacheEntryRecord } from '../ports/cache-store';

/**
 * The first element of every encoded record, changed with the format. Records needing no tag are
 * plain JSON under their own version, read by JSON.parse alone, much faster than with a reviver.
 */
const FORMAT_VERSION = 1;
const PLAIN_FORMAT_VERSION = 2;

/** Set by `encodeValue` when it tagged or escaped anything in the record being encoded. */
let encodingNeededTags = false;

const TAG = '$';

/** The tags of the table above. */
const enum Tag {
  RawJson = 'j',
  Date = 'd',
  Number = 'n',
  BigInt = 'i',
  Buffer = 'b',
}

interface Tagged {
  $: Tag;
  v: unknown;
}

/** `record` as text that `decodeCacheRecord` turns back into an equal record. */
export function encodeCacheRecord(record: CacheEntryRecord): string {
  // cachedAt travels as milliseconds, outside the tags: every record has one.
  const fields = { ...record, cachedAt: record.cachedAt.getTime() };
  encodingNeededTags = false;
  const body = JSON.stringify(fields, encodeValue);
  return `[${encodingNeededTags ? FORMAT_VERSION : PLAIN_FORMAT_VERSION},${body}]`;
}

/**
 * The record `encodeCacheRecord` wrote. Throws a TypeError for a text it did not write (another
 * format version, or a record missing a field), so a store can treat such an entry as absent.
 */
export function decodeCacheRecord(text: string): CacheEntryRecord {
  const plain = text.startsWith(`[${PLAIN_FORMAT_VERSION},`);
  const decoded: unknown = plain ? JSON.parse(text) : JSON.parse(text, decodeValue);
  const version = plain ? PLAIN_FORMAT_VERSION : FORMAT_VERSION;
  if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== version) {
    throw new TypeError('Not a cache record of this format');
  }
  const record = decoded[1] as Record<string, unknown> | null;
  if (typeof record === 'object' && record !== null && typeof record.cachedAt === 'number') {
    record.cachedAt = new Date(record.cachedAt);
  }
  return checkedRecord(record);
}

/**
 * JSON.stringify's replacer. `value` has been through `toJSON` already (a RawJson's parsed value,
 * a Date's ISO text), so the original is read from the holder, `this`.
 */
function encodeValue(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof RawJson) return tagged(Tag.RawJson, original.text);
  if (original instanceof Date) {
    const time = original.getTime();
    return tagged(Tag.Date, Number.isNaN(time) ? null : time);
  }
  if (Buffer.isBuffer(original)) return tagged(Tag.Buffer, original.toString('base64'));
  switch (typeof value) {
    case 'number':
      // JSON writes -0 as 0 and NaN and ±Infinity as null.
      if (Object.is(value, -0)) return tagged(Tag.Number, '-0'); // String(-0) is '0'
      return Number.isFinite(value) ? value : tagged(Tag.Number, String(value));
    case 'bigint':
      return tagged(Tag.BigInt, value.toString());
    case 'object':
      return value === null || Array.isArray(value) ? value : withKeysEscaped(value);
    default:
      return value;
  }
}

function tagged(tag: Tag, value: unknown): Tagged {
  encodingNeededTags = true;
  return { $: tag, v: value };
}

/** `object` itself, or a copy whose keys starting with `$` have one more `$`. */
function withKeysEscaped(object: object): object {
  const keys = Object.keys(object);
  if (!keys.some(startsWithTag)) return object;
  encodingNeededTags = true;
  return Object.fromEntries(
    keys.map((key) => [
      startsWithTag(key) ? TAG + key : key,
      (object as Record<string, unknown>)[key],
    ]),
  );
}

function startsWithTag(key: string): boolean {
  return key.charCodeAt(0) === 0x24; // '$'
}

/** JSON.parse's reviver: the inverse of `encodeValue`, applied from the leaves up. */
function decodeValue(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  if (Object.hasOwn(value, TAG)) return untagged(value as Tagged);
  return withKeysUnescaped(value);
}

function untagged(value: Tagged): unknown {
  const inner = value.v;
  switch (value.$) {
    case Tag.RawJson:
      if (typeof inner === 'string') return new RawJson(inner);
      break;
    case Tag.Date:
      if (inner === null || typeof inner === 'number') return new Date(inner ?? Number.NaN);
      break;
    case Tag.Number:
      if (typeof inner === 'string') return Number(inner);
      break;
    case Tag.BigInt:
      if (typeof inner === 'string') return BigInt(inner);
      break;
    case Tag.Buffer:
      if (typeof inner === 'string') return Buffer.from(inner, 'base64');
      break;
  }
  throw new TypeError(`Not a tagged value: ${JSON.stringify(value.$)}`);
}

/**
 * `object` itself, or a copy with one `$` removed from each key starting with `$`. Object.fromEntries
 * defines own properties, so a column named `__proto__` stays a column and never a prototype.
 */
function withKeysUnescaped(object: object): object {
  const keys = Object.keys(object);
  if (!keys.some(startsWithTag)) return object;
  return Object.fromEntries(
    keys.map((key) => [
      startsWithTag(key) ? key.slice(1) : key,
      (object as Record<string, unknown>)[key],
    ]),
  );
}

/** The decoded record, once every field has the type the port promises. */
function checkedRecord(value: unknown): CacheEntryRecord {
  const record = value as CacheEntryRecord;
  const result = record?.result as unknown as Record<string, unknown> | undefined;
  const valid =
    typeof record === 'object' &&
    record !== null &&
    typeof record.key === 'string' &&
    typeof record.scope === 'string' &&
    typeof record.server === 'string' &&
    typeof record.query === 'string' &&
    (record.reads === null ||
      (Array.isArray(record.reads) && record.reads.every((each) => typeof each === 'string'))) &&
    typeof record.sizeBytes === 'number' &&
    typeof record.executionTime === 'number' &&
    record.cachedAt instanceof Date &&
    typeof record.freshMs === 'number' &&
    typeof record.hits === 'number' &&
    typeof result === 'object' &&
    result !== null &&
    Array.isArray(result.rows) &&
    Array.isArray(result.fields) &&
    (result.rowCount === null || typeof result.rowCount === 'number') &&
    (result.command === null || typeof result.command === 'string') &&
    typeof result.truncated === 'boolean';
  if (!valid) throw new TypeError('Not a complete cache record');
  return record;
}
