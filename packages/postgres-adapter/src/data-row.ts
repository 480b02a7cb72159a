/**
 * The one decoder of a DataRow body: a field count, then each length (-1 for NULL) and bytes,
 * ending exactly at the message's end; lying lengths are a protocol fault (docs/decisions.md 10.1).
 */
import { ProtocolViolation } from './message-framing-errors';

/** Node's own UTF-8 decoder of a range, without Buffer.prototype.toString's argument handling. */
type Utf8Slicing = Buffer & { utf8Slice(start: number, end: number): string };

function shorter(): never {
  throw new ProtocolViolation('The server sent a row shorter than its fields');
}

/**
 * The values of the DataRow body `bytes[start, end)` (UTF-8 text, null for NULL); with
 * `decode` false the row is only checked, for a reader that decodes it itself.
 */
export function readDataRow(
  bytes: Buffer,
  start: number,
  end: number,
  decode = true,
): (string | null)[] {
  if (end - start < 2) shorter();
  const count = bytes.readUInt16BE(start);
  const values = new Array<string | null>(decode ? count : 0);
  let at = start + 2;
  for (let index = 0; index < count; index++) {
    if (end - at < 4) shorter();
    const length = bytes.readInt32BE(at);
    at += 4;
    if (length === -1) {
      if (decode) values[index] = null;
      continue;
    }
    if (length < -1) throw new ProtocolViolation(`The server sent a field length of ${length}`);
    if (end - at < length) shorter();
    if (decode) values[index] = (bytes as Utf8Slicing).utf8Slice(at, at + length);
    at += length;
  }
  if (at !== end) throw new ProtocolViolation('The server sent a row longer than its fields');
  return values;
}
