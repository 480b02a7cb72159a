import { Lexer } from './lexer';

/**
 * Normalisation rule (DECISIONS.md section 1): tokens are copied byte for byte; the gap between two
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

  get isEmpty(): boolean {
    return this.runStart < 0;
  }

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

/**
 * Maps a UTF-16 offset within the normalised text of the statement spanning `source[start, end)`
 * back to the submitted text. A position on a collapsed gap maps to the end of the token before it.
 */
export function sourceOffsetOf(source: string, start: number, end: number, offset: number): number {
  const lexer = new Lexer(source, start, end);
  let normalisedRunStart = 0;
  let runStart = -1;
  let previousEnd = start;
  while (lexer.next() !== 'end') {
    if (lexer.kind === 'comment' && !lexer.unterminated) continue;
    if (runStart < 0) runStart = lexer.start;
    else if (!gapIsKept(source, previousEnd, lexer.start)) {
      const runLength = previousEnd - runStart;
      if (offset < normalisedRunStart + runLength) return runStart + (offset - normalisedRunStart);
      if (offset === normalisedRunStart + runLength) return previousEnd;
      normalisedRunStart += runLength + 1;
      runStart = lexer.start;
    }
    previousEnd = lexer.end;
  }
  if (runStart < 0) return start;
  return Math.min(runStart + (offset - normalisedRunStart), previousEnd);
}
