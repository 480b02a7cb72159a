import { isWord, Lexer, type TokenKind } from './lexer';
import { NormalisedTextBuilder } from './normalise';

/** One statement of a submitted text, before classification. */
export interface StatementSpan {
  /** UTF-16 offset of the first token in the submitted text. */
  start: number;
  /** UTF-16 offset just past the last token (the terminating `;` is outside). */
  end: number;
  /** The statement was ended by `;`. */
  terminated: boolean;
  /** Normalised text: comments removed, gaps between tokens collapsed to one space. */
  text: string;
  /** It ends in a string, quoted identifier, dollar quote or comment that is never closed. */
  unterminated: boolean;
  /** Index of its first token in the TokenStore given to scanStatements(), if one was. */
  firstToken: number;
  /** Number of its tokens, comments left out. */
  tokenCount: number;
}

/**
 * The tokens of a whole text, comments left out, in parallel arrays shared by all its statements:
 * classification reuses them instead of lexing each statement again, without allocating per token
 * or per statement.
 */
export class TokenStore {
  readonly kinds: TokenKind[] = [];
  /** UTF-16 offsets into `source`. */
  readonly starts: number[] = [];
  readonly ends: number[] = [];

  constructor(readonly source: string) {}

  push(kind: TokenKind, start: number, end: number): void {
    this.kinds.push(kind);
    this.starts.push(start);
    this.ends.push(end);
  }
}

const SEMICOLON = 59;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;

/**
 * Decides whether a `;` ends the statement, as psql and PostgreSQL's scanner do: only at
 * parenthesis depth 0, and not inside the `BEGIN ATOMIC ... END` body of a SQL-standard function
 * (`CREATE [OR REPLACE] FUNCTION|PROCEDURE`, or `CREATE SCHEMA` whose elements may hold one).
 * `CASE ... END` inside the body is counted so its END does not close the body early.
 */
class StatementBoundary {
  private depth = 0;
  private leadingWords: string[] = [];
  /** null until the first words tell whether the statement can hold a BEGIN ATOMIC body. */
  private isRoutine: boolean | null = null;
  private atomicDepth = 0;
  private previousWasBegin = false;

  constructor(private readonly text: string) {}

  reset(): void {
    this.depth = 0;
    this.leadingWords = [];
    this.isRoutine = null;
    this.atomicDepth = 0;
    this.previousWasBegin = false;
  }

  /** Feeds a non-comment token; returns true when it is a `;` that ends the statement. */
  endsStatement(kind: TokenKind, start: number, end: number): boolean {
    if (kind === 'punctuation') {
      const c = this.text.charCodeAt(start);
      this.previousWasBegin = false;
      if (c === SEMICOLON) return this.depth === 0 && this.atomicDepth === 0;
      if (c === OPEN_PAREN) this.depth++;
      // psql ignores a `)` without a matching `(`.
      else if (c === CLOSE_PAREN && this.depth > 0) this.depth--;
      return false;
    }
    if (kind !== 'word') {
      this.previousWasBegin = false;
      return false;
    }
    if (this.isRoutine === null) this.recogniseRoutine(this.text.slice(start, end).toLowerCase());
    if (this.isRoutine && this.depth === 0) this.trackAtomicBody(start, end);
    this.previousWasBegin = isWord(this.text, start, end, 'begin');
    return false;
  }

  private recogniseRoutine(word: string): void {
    const words = this.leadingWords;
    words.push(word);
    if (words[0] !== 'create') this.isRoutine = false;
    else if (words.length === 2) {
      if (word === 'function' || word === 'procedure' || word === 'schema') this.isRoutine = true;
      else if (word !== 'or') this.isRoutine = false;
    } else if (words.length === 3 && word !== 'replace') this.isRoutine = false;
    else if (words.length === 4) this.isRoutine = word === 'function' || word === 'procedure';
  }

  private trackAtomicBody(start: number, end: number): void {
    const text = this.text;
    if (this.atomicDepth === 0) {
      if (this.previousWasBegin && isWord(text, start, end, 'atomic')) this.atomicDepth = 1;
    } else if (isWord(text, start, end, 'case')) this.atomicDepth++;
    else if (isWord(text, start, end, 'end')) this.atomicDepth--;
  }
}

/**
 * Cuts `text` into statements with their normalised text, in one pass over the tokens.
 * Statements without tokens (`;;`, only comments) are dropped. When `tokens` is given, the
 * statements' tokens are appended to it (see `firstToken` and `tokenCount`).
 */
export function scanStatements(text: string, tokens?: TokenStore): StatementSpan[] {
  const statements: StatementSpan[] = [];
  forEachStatement(text, (statement) => statements.push(statement), tokens);
  return statements;
}

/**
 * Calls `visit` with each statement of `text` in order, as `scanStatements` would return them,
 * for callers that keep only part of each (splitSql keeps the text, so a long script does not
 * hold every span alive until the end).
 */
export function forEachStatement(
  text: string,
  visit: (statement: StatementSpan) => void,
  tokens?: TokenStore,
): void {
  const lexer = new Lexer(text);
  const boundary = new StatementBoundary(text);
  const builder = new NormalisedTextBuilder(text);
  let start = -1;
  let end = -1;
  let unterminated = false;
  let firstToken = 0;
  let tokenCount = 0;
  const finishStatement = (terminated: boolean): void => {
    const text = builder.finish();
    visit({ start, end, terminated, text, unterminated, firstToken, tokenCount });
    start = -1;
  };
  for (;;) {
    const kind = lexer.next();
    if (kind === 'end') break;
    // An unterminated comment is kept so PostgreSQL reports it (see lexer.ts).
    if (kind === 'comment' && !lexer.unterminated) continue;
    if (boundary.endsStatement(kind, lexer.start, lexer.end)) {
      if (start >= 0) finishStatement(true);
      boundary.reset();
      continue;
    }
    if (start < 0) {
      start = lexer.start;
      unterminated = false;
      firstToken = tokens === undefined ? 0 : tokens.kinds.length;
      tokenCount = 0;
    }
    end = lexer.end;
    builder.add(lexer.start, lexer.end);
    if (lexer.unterminated) unterminated = true;
    // The unterminated comment belongs to the text, not to the syntax.
    if (kind === 'comment') continue;
    tokenCount++;
    tokens?.push(kind, lexer.start, lexer.end);
  }
  if (start >= 0) finishStatement(false);
}
