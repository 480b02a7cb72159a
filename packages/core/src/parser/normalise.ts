/**
 * Normalisation rule (docs/decisions.md section 1). It shapes only the `statement` a response shows:
 * what runs is the text as written (10.9). Tokens are copied byte for byte; the gap between two
 * tokens of a statement (whitespace and comments) becomes one space, and an empty gap stays empty,
 * so `a/*c*\/b` becomes `a b` and `1+2` stays `1+2`. A gap that already is one space is kept as is,
 * which lets most of a statement be copied as one slice of the submitted text.
 *
 * The gaps inside a continued string literal (`'a'` newline `'b'`) are part of the string token,
 * so they are never touched: collapsing that newline would change the literal's meaning.
 */
function gapIsKept(source: string, previousEnd: number, start: number): boolean {
  return (
    start === previousEnd || (start === previousEnd + 1 && source.charCodeAt(previousEnd) === 32)
  );
}

/** Builds the normalised text of one statement from its tokens, in order. */
export class NormalisedTextBuilder {
  private parts: string[] = [];
  private runStart = -1;
  private previousEnd = -1;

  constructor(private readonly source: string) {}

  /** Appends the token `source[start, end)`. */
  add(start: number, end: number): void {
    if (this.runStart < 0) this.runStart = start;
    else if (!gapIsKept(this.source, this.previousEnd, start)) {
      this.parts.push(this.source.slice(this.runStart, this.previousEnd));
      this.runStart = start;
    }
    this.previousEnd = end;
  }

  /** The normalised text so far; the builder is then empty again. */
  finish(): string {
    const lastRun = this.source.slice(this.runStart, this.previousEnd);
    const text = this.parts.length === 0 ? lastRun : this.parts.join(' ') + ' ' + lastRun;
    this.parts = [];
    this.runStart = -1;
    this.previousEnd = -1;
    return text;
  }
}
