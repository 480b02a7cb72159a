/**
 * Values bound to `$1`, `$2`… turned into the text PostgreSQL reads, as node-postgres turns them
 * (its `prepareValue`), so that a program moving from pg sends the same values: null and undefined
 * are NULL, a Date is a timestamp with the local offset, bytes are bytea's hex form, an array is an
 * array literal, an object its `toPostgres()` or its JSON, anything else its `toString()`.
 */

/** `bytes` as bytea's hex input form, `\x0a0b…`. */
function byteaHex(bytes: ArrayBufferView): string {
  const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let hex = '\\x';
  for (const byte of view) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

const pad = (value: number, digits: number): string => String(value).padStart(digits, '0');

/** A Date as node-postgres sends it: local time and offset, `BC` before year 1. */
function dateText(date: Date): string {
  let year = date.getFullYear();
  const beforeChrist = year < 1;
  // PostgreSQL has no year 0: year 0 is 1 BC.
  if (beforeChrist) year = Math.abs(year) + 1;
  let offset = -date.getTimezoneOffset();
  let text =
    `${pad(year, 4)}-${pad(date.getMonth() + 1, 2)}-${pad(date.getDate(), 2)}` +
    `T${pad(date.getHours(), 2)}:${pad(date.getMinutes(), 2)}:${pad(date.getSeconds(), 2)}` +
    `.${pad(date.getMilliseconds(), 3)}`;
  text += offset < 0 ? '-' : '+';
  offset = Math.abs(offset);
  text += `${pad(Math.floor(offset / 60), 2)}:${pad(offset % 60, 2)}`;
  return beforeChrist ? `${text} BC` : text;
}

/** A JavaScript array as a PostgreSQL array literal (comma-separated, every element quoted). */
function arrayLiteral(values: readonly unknown[]): string {
  const elements = values.map((item) => {
    if (item === null || item === undefined) return 'NULL';
    if (Array.isArray(item)) return arrayLiteral(item);
    // In an array, bytea's backslash is itself escaped.
    if (ArrayBuffer.isView(item)) return `\\${byteaHex(item)}`;
    const text = prepareValue(item) as string;
    return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${elements.join(',')}}`;
}

interface ToPostgres {
  toPostgres(prepare: (value: unknown) => unknown): unknown;
}

function hasToPostgres(value: object): value is ToPostgres {
  return typeof (value as Partial<ToPostgres>).toPostgres === 'function';
}

/** The text of one parameter, or null for NULL. */
export function prepareValue(value: unknown, seen: object[] = []): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return String(value);
  if (ArrayBuffer.isView(value)) return byteaHex(value);
  if (value instanceof Date) return dateText(value);
  if (Array.isArray(value)) return arrayLiteral(value);
  if (hasToPostgres(value)) {
    if (seen.includes(value)) {
      throw new TypeError('circular reference detected while preparing a value for a query');
    }
    return prepareValue(
      value.toPostgres((inner) => prepareValue(inner)),
      [...seen, value],
    );
  }
  return JSON.stringify(value);
}
