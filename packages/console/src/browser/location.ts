/**
 * Where an error's `location` falls in the editor. sqlgate counts lines as PostgreSQL does (a line
 * ends at `\n`, `\r\n` or `\r`) and columns in characters, so a character outside the Basic
 * Multilingual Plane is one column; the editor counts UTF-16 code units.
 */
export interface TextLocation {
  line: number;
  column: number;
}

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

/**
 * The UTF-16 offset in `text` of a 1-based line and column, clamped to the end of that line (or of
 * the text, for a line past the last).
 */
export function offsetOfLocation(text: string, location: TextLocation): number {
  let offset = 0;
  for (let line = 1; line < location.line; line++) {
    const end = lineEnd(text, offset);
    if (end >= text.length) return text.length;
    offset =
      end +
      (text.charCodeAt(end) === CARRIAGE_RETURN && text.charCodeAt(end + 1) === NEWLINE ? 2 : 1);
  }
  const end = lineEnd(text, offset);
  for (let column = 1; column < location.column && offset < end; column++) {
    offset += isSurrogatePairAt(text, offset) ? 2 : 1;
  }
  return offset;
}

function lineEnd(text: string, from: number): number {
  let p = from;
  while (p < text.length) {
    const c = text.charCodeAt(p);
    if (c === NEWLINE || c === CARRIAGE_RETURN) break;
    p++;
  }
  return p;
}

function isSurrogatePairAt(text: string, offset: number): boolean {
  const high = text.charCodeAt(offset);
  const low = text.charCodeAt(offset + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}
