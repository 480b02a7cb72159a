/**
 * Normalisation (docs/decisions.md section 1), for the `statement` a response shows only (10.9):
 * tokens are copied byte for byte, a gap of whitespace and comments becomes one space and an empty
 * gap stays empty. A gap already one space is kept, so most of a statement is one slice.
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
