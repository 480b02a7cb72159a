/**
 * Character classes of PostgreSQL's scanner (scan.l), as a table over ASCII: every non-ASCII
 * character is an identifier character.
 */

export const SPACE = 1;
export const WORD_START = 2;
export const WORD_PART = 4;
export const DIGIT = 8;
export const OPERATOR = 16;
/** Operator characters whose presence keeps a trailing + or - in the operator (scan.l). */
export const NON_SQL_OPERATOR = 32;

export const CHAR_CLASS = new Uint8Array(128);
// PostgreSQL 15's scanner: `space [ \t\n\r\f]`. A vertical tab is not whitespace there (newer
// releases, such as the corpus's 18, take it as one), so `SELECT\v1` reaches the server as written
// and fails there, as psql's would (docs/decisions.md 10.11).
for (const ch of ' \t\n\r\f') CHAR_CLASS[ch.charCodeAt(0)] = SPACE;
for (let c = 0; c < 128; c++) {
  const isLetter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
  if (isLetter) CHAR_CLASS[c] = WORD_START | WORD_PART;
  if (c >= 48 && c <= 57) CHAR_CLASS[c] = WORD_PART | DIGIT;
}
CHAR_CLASS[36] = WORD_PART; // `$` continues an identifier: `x$$` is one word, not a dollar quote.
for (const ch of '~!@#^&|`?+-*/%<>=') CHAR_CLASS[ch.charCodeAt(0)] = OPERATOR;
for (const ch of '~!@#^&|`?%') CHAR_CLASS[ch.charCodeAt(0)] = OPERATOR | NON_SQL_OPERATOR;

/** Every non-ASCII character is an identifier character in PostgreSQL. */
export const NON_ASCII_CLASS = WORD_START | WORD_PART;

export function classOf(c: number): number {
  return c >= 128 ? NON_ASCII_CLASS : (CHAR_CLASS[c] ?? 0);
}

export const QUOTE = 39;
export const DOUBLE_QUOTE = 34;
export const DOLLAR = 36;
export const BACKSLASH = 92;
export const NEWLINE = 10;
export const CARRIAGE_RETURN = 13;
export const HYPHEN = 45;
export const SLASH = 47;
export const STAR = 42;
export const DOT = 46;
export const COLON = 58;

export function isSign(c: number): boolean {
  return c === 43 || c === HYPHEN;
}

export function isSignedDigit(text: string, p: number): boolean {
  return isSign(text.charCodeAt(p)) && (classOf(text.charCodeAt(p + 1)) & DIGIT) !== 0;
}

/** `text[start, end)` equals `lowerCaseWord` ignoring ASCII case, without allocating. */
export function isWord(text: string, start: number, end: number, lowerCaseWord: string): boolean {
  if (end - start !== lowerCaseWord.length) return false;
  for (let i = 0; i < lowerCaseWord.length; i++) {
    const c = text.charCodeAt(start + i);
    const lower = c >= 65 && c <= 90 ? c + 32 : c;
    if (lower !== lowerCaseWord.charCodeAt(i)) return false;
  }
  return true;
}
