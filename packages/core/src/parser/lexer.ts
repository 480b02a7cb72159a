/**
 * A lexer for PostgreSQL text following PostgreSQL 15's scan.l, standard_conforming_strings
 * included (docs/decisions.md 10.11). It only finds token boundaries; strings, quoted identifiers
 * and dollar bodies are one token each. An unclosed one runs to the end of the text, flagged
 * `unterminated`, for the splitter to refuse (docs/decisions.md 10.10).
 */

import {
  BACKSLASH,
  CARRIAGE_RETURN,
  classOf,
  COLON,
  DIGIT,
  DOLLAR,
  DOT,
  DOUBLE_QUOTE,
  HYPHEN,
  NEWLINE,
  OPERATOR,
  QUOTE,
  SLASH,
  SPACE,
  STAR,
  WORD_PART,
  WORD_START,
} from './characters';
import { continuedQuoteAt, numberEnd, operatorEnd } from './lexemes';

export type TokenKind =
  /** Identifier or keyword, unquoted. */
  | 'word'
  /** `"..."` or `U&"..."`. */
  | 'quoted-ident'
  /** `'...'`, `E'...'`, `B'...'`, `X'...'`, `U&'...'`, including continued segments. */
  | 'string'
  /** `$$...$$` or `$tag$...$tag$`. */
  | 'dollar-string'
  | 'number'
  /** `$1`, `$2`... */
  | 'parameter'
  /** A run of operator characters: `+`, `<>`, `->>`, `@@`... */
  | 'operator'
  /** One of `( ) [ ] , ; . .. : :: :=`. */
  | 'punctuation'
  /** `-- ...` or `/* ... *\/` (nested). */
  | 'comment'
  /** Any other character, such as a backslash or a `$` that starts nothing. */
  | 'other';

/** How backslashes and doubled quotes behave inside a quoted string. */
type StringMode = 'standard' | 'escape' | 'bits';

/**
 * Streams the tokens of `text`, skipping whitespace. Comments are returned as tokens, so callers
 * decide what to keep. No token object is allocated: read `kind`, `start`, `end` after `next()`.
 */
export class Lexer {
  kind: TokenKind | 'end' = 'end';
  /** UTF-16 offset of the token's first character. */
  start = 0;
  /** UTF-16 offset just past its last character. */
  end = 0;
  /** The closing quote or comment end is missing: the token runs to the end of the text. */
  unterminated = false;
  /**
   * A plain '...' string (not E'', U&'', B'' or X'') holding a backslash: its end, and so the split,
   * may differ with standard_conforming_strings.
   */
  plainStringBackslash = false;
  private position: number;
  /** How a plain '...' string reads its backslashes. */
  private readonly plainStringMode: StringMode;

  /**
   * @param standardConformingStrings the target's setting; off makes backslashes escape in '...'
   */
  constructor(
    private readonly text: string,
    from = 0,
    private readonly limit = text.length,
    standardConformingStrings = true,
  ) {
    this.position = from;
    this.plainStringMode = standardConformingStrings ? 'standard' : 'escape';
  }

  /** Moves to the next token and returns its kind, or `'end'`. */
  next(): TokenKind | 'end' {
    const text = this.text;
    const limit = this.limit;
    let p = this.position;
    while (p < limit && classOf(text.charCodeAt(p)) & SPACE) p++;
    this.start = p;
    this.unterminated = false;
    this.plainStringBackslash = false;
    if (p >= limit) {
      this.end = p;
      return (this.kind = 'end');
    }
    const kind = this.scanToken(p);
    this.position = this.end;
    return (this.kind = kind);
  }

  private scanToken(p: number): TokenKind {
    const text = this.text;
    const c = text.charCodeAt(p);
    const c1 = text.charCodeAt(p + 1);
    if (c === HYPHEN && c1 === HYPHEN) return this.lineComment(p + 2);
    if (c === SLASH && c1 === STAR) return this.blockComment(p + 2);
    if (c === QUOTE) return this.quotedString(p + 1, this.plainStringMode, true);
    if (c === DOUBLE_QUOTE) return this.quotedIdentifier(p + 1);
    if (c === DOLLAR) return this.dollar(p);
    const cls = classOf(c);
    if (cls & DIGIT || (c === DOT && classOf(c1) & DIGIT)) return this.number(p);
    if (cls & WORD_START) return this.wordOrPrefixedQuote(p, c, c1);
    if (cls & OPERATOR) return this.operator(p);
    return this.punctuationOrOther(p, c, c1);
  }

  private lineComment(p: number): TokenKind {
    const text = this.text;
    const n = text.length;
    while (p < n) {
      const c = text.charCodeAt(p);
      if (c === NEWLINE || c === CARRIAGE_RETURN) break;
      p++;
    }
    this.end = p;
    return 'comment';
  }

  /** PostgreSQL block comments nest: `/* a /* b *\/ c *\/` is one comment. */
  private blockComment(p: number): TokenKind {
    const text = this.text;
    const n = text.length;
    let depth = 1;
    while (p < n) {
      const c = text.charCodeAt(p);
      if (c === SLASH && text.charCodeAt(p + 1) === STAR) {
        depth++;
        p += 2;
      } else if (c === STAR && text.charCodeAt(p + 1) === SLASH) {
        p += 2;
        if (--depth === 0) {
          this.end = p;
          return 'comment';
        }
      } else p++;
    }
    return this.runToEnd('comment');
  }

  private runToEnd(kind: TokenKind): TokenKind {
    this.end = this.text.length;
    this.unterminated = true;
    return kind;
  }

  /**
   * A quoted string from just after its opening quote, with its continued segments: per the SQL
   * standard, `'a'` newline `'b'` is the one literal `'ab'` (the gap must contain a newline and
   * may contain `--` comments, but not `/* *\/` comments).
   */
  private quotedString(bodyStart: number, mode: StringMode, plain = false): TokenKind {
    let p = this.stringBodyEnd(bodyStart, mode, plain);
    for (;;) {
      if (p < 0) return this.runToEnd('string');
      const nextQuote = continuedQuoteAt(this.text, p);
      if (nextQuote < 0) break;
      p = this.stringBodyEnd(nextQuote + 1, mode, plain);
    }
    this.end = p;
    return 'string';
  }

  /**
   * Index just past the closing quote, or -1 when the string is never closed. `plain`: a '...'
   * string, whose backslashes are recorded in `plainStringBackslash`.
   */
  private stringBodyEnd(p: number, mode: StringMode, plain: boolean): number {
    const text = this.text;
    const n = text.length;
    while (p < n) {
      const c = text.charCodeAt(p);
      if (c === QUOTE) {
        // B'' and X'' literals have no '' escape: the second quote starts a new literal.
        if (mode !== 'bits' && text.charCodeAt(p + 1) === QUOTE) {
          p += 2;
          continue;
        }
        return p + 1;
      }
      if (c === BACKSLASH) {
        if (plain) this.plainStringBackslash = true;
        p += mode === 'escape' ? 2 : 1;
      } else p++;
    }
    return -1;
  }

  private quotedIdentifier(p: number): TokenKind {
    const text = this.text;
    const n = text.length;
    while (p < n) {
      if (text.charCodeAt(p) === DOUBLE_QUOTE) {
        if (text.charCodeAt(p + 1) !== DOUBLE_QUOTE) {
          this.end = p + 1;
          return 'quoted-ident';
        }
        p++;
      }
      p++;
    }
    return this.runToEnd('quoted-ident');
  }

  /** `$1` is a parameter; `$$` and `$tag$` open a dollar quote; a tag cannot start with a digit. */
  private dollar(p: number): TokenKind {
    const text = this.text;
    const c1 = text.charCodeAt(p + 1);
    if (classOf(c1) & DIGIT) {
      let q = p + 2;
      while (classOf(text.charCodeAt(q)) & DIGIT) q++;
      this.end = q;
      return 'parameter';
    }
    let tagEnd = -1;
    if (c1 === DOLLAR) tagEnd = p + 1;
    else if (classOf(c1) & WORD_START) {
      let q = p + 2;
      for (;;) {
        const c = text.charCodeAt(q);
        if (c === DOLLAR) {
          tagEnd = q;
          break;
        }
        if (!(classOf(c) & (WORD_START | DIGIT))) break;
        q++;
      }
    }
    if (tagEnd < 0) {
      // `$abc` without a closing `$` is a lone `$` followed by a word, as in scan.l.
      this.end = p + 1;
      return 'other';
    }
    const delimiter = text.slice(p, tagEnd + 1);
    const close = text.indexOf(delimiter, tagEnd + 1);
    if (close < 0) return this.runToEnd('dollar-string');
    this.end = close + delimiter.length;
    return 'dollar-string';
  }

  private number(p: number): TokenKind {
    this.end = numberEnd(this.text, p);
    return 'number';
  }

  private wordOrPrefixedQuote(p: number, c: number, c1: number): TokenKind {
    if (c1 === QUOTE) {
      if (c === 69 || c === 101) return this.quotedString(p + 2, 'escape'); // E'...'
      if (c === 66 || c === 98 || c === 88 || c === 120) return this.quotedString(p + 2, 'bits');
    }
    if ((c === 85 || c === 117) && c1 === 38) {
      const c2 = this.text.charCodeAt(p + 2);
      // U&'...' never takes backslash escapes: with standard_conforming_strings off, PostgreSQL
      // refuses it, and psql still lexes it this way.
      if (c2 === QUOTE) return this.quotedString(p + 3, 'standard'); // U&'...'
      if (c2 === DOUBLE_QUOTE) return this.quotedIdentifier(p + 3); // U&"..."
    }
    // N'...' needs nothing special: PostgreSQL lexes it as the word N followed by a string.
    const text = this.text;
    const n = text.length;
    p++;
    while (p < n && classOf(text.charCodeAt(p)) & WORD_PART) p++;
    this.end = p;
    return 'word';
  }

  private operator(start: number): TokenKind {
    this.end = operatorEnd(this.text, start);
    return 'operator';
  }

  private punctuationOrOther(p: number, c: number, c1: number): TokenKind {
    if (c === COLON) {
      this.end = c1 === COLON || c1 === 61 ? p + 2 : p + 1;
      return 'punctuation';
    }
    if (c === DOT) {
      this.end = c1 === DOT ? p + 2 : p + 1;
      return 'punctuation';
    }
    this.end = p + 1;
    // ( ) , ; [ ]
    if (c === 40 || c === 41 || c === 44 || c === 59 || c === 91 || c === 93) return 'punctuation';
    return 'other';
  }
}

export { isWord } from './characters';
