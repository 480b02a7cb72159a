/**
 * Checks the inside of a DataRow as its bytes stream past: a field count, then each field's length
 * (-1 for NULL) and that many bytes, ending exactly at the message's end. pg's parser trusts these
 * lengths and reads past the message into the next one when they lie, turning a broken row into
 * plausible garbage; this check makes it a protocol fault instead (docs/decisions.md 10.1).
 */
import { ProtocolViolation } from './message-framing-errors';

export class DataRowCheck {
  /** Bytes of the current integer (field count: 2, length: 4) still to read. */
  private headerNeeded = 2;
  private headerValue = 0;
  private readingCount = true;
  private fieldsLeft = 0;
  /** Bytes of the current field's value still to come. */
  private valueLeft = 0;

  /** A new row begins. */
  reset(): void {
    this.headerNeeded = 2;
    this.headerValue = 0;
    this.readingCount = true;
    this.fieldsLeft = 0;
    this.valueLeft = 0;
  }

  /** Feeds `bytes[start, end)` of the row's body. */
  feed(bytes: Buffer, start: number, end: number): void {
    let offset = start;
    while (offset < end) {
      if (this.valueLeft > 0) {
        const take = Math.min(this.valueLeft, end - offset);
        this.valueLeft -= take;
        offset += take;
        continue;
      }
      if (!this.readingCount && this.fieldsLeft === 0) {
        throw new ProtocolViolation('The server sent a row longer than its fields');
      }
      this.headerValue = this.headerValue * 256 + (bytes[offset] as number);
      offset++;
      if (--this.headerNeeded > 0) continue;
      this.takeInteger();
    }
  }

  /** The row's body ended: every field must have been complete. */
  finish(): void {
    if (this.readingCount || this.fieldsLeft > 0 || this.valueLeft > 0 || this.headerNeeded !== 4) {
      throw new ProtocolViolation('The server sent a row shorter than its fields');
    }
  }

  private takeInteger(): void {
    if (this.readingCount) {
      this.readingCount = false;
      this.fieldsLeft = this.headerValue;
    } else {
      // A signed int32: 0xFFFFFFFF is -1 (NULL); any other negative length is a fault.
      const length = this.headerValue >= 2 ** 31 ? this.headerValue - 2 ** 32 : this.headerValue;
      if (length < -1) throw new ProtocolViolation(`The server sent a field length of ${length}`);
      this.valueLeft = Math.max(0, length);
      this.fieldsLeft--;
    }
    this.headerNeeded = 4;
    this.headerValue = 0;
  }
}

/** Node's own UTF-8 decoder of a range, without Buffer.prototype.toString's argument handling. */
type Utf8Slicing = Buffer & { utf8Slice(start: number, end: number): string };

/**
 * The values of a whole DataRow body `bytes[start, end)`, as pg's parser reads them (UTF-8 text,
 * null for NULL), checked as DataRowCheck checks a row that streams past, with the same faults.
 */
export function readWholeRow(bytes: Buffer, start: number, end: number): (string | null)[] {
  if (end - start < 2) throw new ProtocolViolation('The server sent a row shorter than its fields');
  const count = bytes.readUInt16BE(start);
  const values = new Array<string | null>(count);
  let at = start + 2;
  for (let index = 0; index < count; index++) {
    if (end - at < 4) throw new ProtocolViolation('The server sent a row shorter than its fields');
    const length = bytes.readInt32BE(at);
    at += 4;
    if (length === -1) {
      values[index] = null;
      continue;
    }
    if (length < -1) throw new ProtocolViolation(`The server sent a field length of ${length}`);
    if (end - at < length) {
      throw new ProtocolViolation('The server sent a row shorter than its fields');
    }
    values[index] = (bytes as Utf8Slicing).utf8Slice(at, at + length);
    at += length;
  }
  if (at !== end) throw new ProtocolViolation('The server sent a row longer than its fields');
  return values;
}
