/**
 * PostgreSQL's array output (array_out) read back into nested arrays. Written here rather than
 * taken from postgres-array because the delimiter depends on the element type (`;` for box,
 * docs/decisions.md 10.14) and a literal with dimension bounds must be recognised, not misread.
 */

/** Turns one element's text (never NULL) into its JSON value. */
export type ElementParser = (text: string) => unknown;

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/** The text is not an array literal this reader can take apart; the caller keeps the text. */
export class NotAnArrayLiteral extends Error {
  constructor(text: string, at: number) {
    super(`Not an array literal at offset ${at}: ${text.slice(0, 40)}`);
    this.name = 'NotAnArrayLiteral';
  }
}

/**
 * The elements of `text`, nested as its dimensions are, each element through `element`; NULL
 * elements are null. Throws NotAnArrayLiteral for anything array_out does not produce with default
 * bounds, including `[2:3]={1,2}` (lower bounds other than 1 have no JSON array form).
 */
export function parseArrayText(text: string, delimiter: string, element: ElementParser): unknown[] {
  if (text.charCodeAt(0) !== OPEN) throw new NotAnArrayLiteral(text, 0);
  const reader = new ArrayTextReader(text, delimiter.charCodeAt(0), element);
  const value = reader.readArray(0);
  if (reader.position !== text.length) throw new NotAnArrayLiteral(text, reader.position);
  return value;
}

class ArrayTextReader {
  position = 0;

  constructor(
    private readonly text: string,
    private readonly delimiter: number,
    private readonly element: ElementParser,
  ) {}

  /** Reads `{...}` starting at `start`; leaves `position` after its closing brace. */
  readArray(start: number): unknown[] {
    const { text } = this;
    const items: unknown[] = [];
    let at = start + 1;
    if (text.charCodeAt(at) === CLOSE) {
      this.position = at + 1;
      return items;
    }
    for (;;) {
      const code = text.charCodeAt(at);
      if (code === OPEN) {
        items.push(this.readArray(at));
        at = this.position;
      } else if (code === QUOTE) {
        at = this.readQuoted(at, items);
      } else {
        at = this.readBare(at, items);
      }
      const next = text.charCodeAt(at);
      if (next === this.delimiter) at++;
      else if (next === CLOSE) {
        this.position = at + 1;
        return items;
      } else throw new NotAnArrayLiteral(text, at);
    }
  }

  /** A quoted element: backslash escapes the next character. Returns the offset after it. */
  private readQuoted(start: number, items: unknown[]): number {
    const { text } = this;
    let value = '';
    let from = start + 1;
    for (let at = from; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code === BACKSLASH) {
        value += text.slice(from, at);
        at++;
        from = at; // the escaped character is kept as the start of the next run
      } else if (code === QUOTE) {
        items.push(this.element(value + text.slice(from, at)));
        return at + 1;
      }
    }
    throw new NotAnArrayLiteral(text, start);
  }

  /** An unquoted element up to the delimiter or the closing brace; `NULL` is null. */
  private readBare(start: number, items: unknown[]): number {
    const { text } = this;
    let at = start;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code === this.delimiter || code === CLOSE) break;
      if (code === OPEN || code === QUOTE || code === BACKSLASH)
        throw new NotAnArrayLiteral(text, at);
      at++;
    }
    if (at === start || at === text.length) throw new NotAnArrayLiteral(text, at);
    const bare = text.slice(start, at);
    items.push(bare === 'NULL' ? null : this.element(bare));
    return at;
  }
}
