/**
 * End offsets of the PostgreSQL lexemes that hold no quoted text, as pure functions over the text.
 */
import {
  CARRIAGE_RETURN,
  CHAR_CLASS,
  classOf,
  DOLLAR,
  DOT,
  HYPHEN,
  isSign,
  isSignedDigit,
  NEWLINE,
  NON_SQL_OPERATOR,
  OPERATOR,
  QUOTE,
  SLASH,
  SPACE,
  STAR,
  WORD_PART,
} from './characters';

/**
 * End of the number starting at `p`: only its boundaries matter. Malformed numbers (`123abc`) stay
 * glued together; PostgreSQL rejects them anyway.
 */
export function numberEnd(text: string, p: number): number {
  let sawDot = text.charCodeAt(p) === DOT;
  p++;
  for (;;) {
    const c = text.charCodeAt(p);
    const cls = c < 128 ? (CHAR_CLASS[c] ?? 0) : 0;
    if (cls & WORD_PART && c !== DOLLAR) {
      p++;
      if ((c === 69 || c === 101) && isSignedDigit(text, p)) p += 2;
    } else if (c === DOT && !sawDot && text.charCodeAt(p + 1) !== DOT) {
      sawDot = true;
      p++;
    } else return p;
  }
}

/**
 * End of the operator starting at `start`. As in scan.l, an operator never contains `--` or `/*`,
 * and loses a trailing + or - unless it holds one of `~!@#^&|\`?%` (so `=-1` is `=` and `-1`).
 */
export function operatorEnd(text: string, start: number): number {
  let p = start + 1;
  let keepsTrailingSign = classOf(text.charCodeAt(start)) & NON_SQL_OPERATOR;
  for (;;) {
    const c = text.charCodeAt(p);
    const cls = classOf(c);
    if (!(cls & OPERATOR)) break;
    const c1 = text.charCodeAt(p + 1);
    if ((c === HYPHEN && c1 === HYPHEN) || (c === SLASH && c1 === STAR)) break;
    keepsTrailingSign |= cls & NON_SQL_OPERATOR;
    p++;
  }
  if (!keepsTrailingSign) {
    while (p - start > 1 && isSign(text.charCodeAt(p - 1))) p--;
  }
  return p;
}

/**
 * After a closing quote at `p`: the index of the quote that continues the literal, or -1.
 * scan.l: `{horiz_whitespace}*{newline}{special_whitespace}*{quote}`, where `--` comments count
 * as whitespace.
 */
export function continuedQuoteAt(text: string, p: number): number {
  let sawNewline = false;
  for (;;) {
    const c = text.charCodeAt(p);
    if (c === NEWLINE || c === CARRIAGE_RETURN) {
      sawNewline = true;
      p++;
    } else if (classOf(c) & SPACE) p++;
    else if (c === HYPHEN && text.charCodeAt(p + 1) === HYPHEN) {
      p += 2;
      while (
        p < text.length &&
        text.charCodeAt(p) !== NEWLINE &&
        text.charCodeAt(p) !== CARRIAGE_RETURN
      )
        p++;
    } else return sawNewline && c === QUOTE ? p : -1;
  }
}
