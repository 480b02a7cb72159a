import { isWord, Lexer, type TokenKind } from './lexer';
import { NormalisedTextBuilder } from './normalise';
import { PositionTracker } from './positions';
import { UnterminatedTextError } from './unterminated';

/** How the target server reads the text (docs/decisions.md 10.11). */
export interface ParseOptions {
  /**
   * The target's `standard_conforming_strings`. Default true (PostgreSQL's default): backslashes
   * are plain characters in '...'. With false they escape, as in E'...', and the split follows.
   */
  standardConformingStrings?: boolean;
}

/** One statement of a submitted text, before classification. */
export interface StatementSpan {
  /** UTF-16 offset of the first token in the submitted text. */
  start: number;
  /**
   * UTF-16 offset where the text to execute starts: the first block comment or token after the
   * previous statement, so a leading optimizer hint (`/*+ SeqScan(t) *\/ SELECT ...`) is sent
   * as psql would send it. Whitespace and `--` comments before it are left out, as psql leaves them.
   */
  sqlStart: number;
  /** UTF-16 offset just past the last token (the terminating `;` is outside). */
  end: number;
  /** The statement was ended by `;`. */
  terminated: boolean;
  /** Normalised text: comments removed, gaps between tokens collapsed to one space. */
  text: string;
  /** It holds a plain '...' string with a backslash (see Token.plainStringBackslash). */
  plainStringBackslash: boolean;
  /** Index of its first token in the TokenStore given to scanStatements(), if one was. */
  firstToken: number;
  /** Number of its tokens, comments left out. */
  tokenCount: number;
}

/**
 * The tokens of a whole text, comments left out, in parallel arrays shared by its statements:
 * classification reuses them without allocating per token or statement.
 */
export class TokenStore {
  readonly kinds: TokenKind[] = [];
  /** UTF-16 offsets into `source`. */
  readonly starts: number[] = [];
  readonly ends: number[] = [];

  /**
   * @param standardConformingStrings the setting the tokens were lexed with (libpg-query always
   *   reads text with it on)
   */
  constructor(
    readonly source: string,
    readonly standardConformingStrings = true,
  ) {}

  push(kind: TokenKind, start: number, end: number): void {
    this.kinds.push(kind);
    this.starts.push(start);
    this.ends.push(end);
  }
}

const SEMICOLON = 59;
const SLASH = 47;
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
 * statements' tokens are appended to it (see `firstToken` and `tokenCount`), and they are lexed
 * with its `standardConformingStrings`.
 *
 * @throws UnterminatedTextError when a string, quoted identifier, dollar quote or block comment is
 *   never closed (docs/decisions.md 10.10)
 */
export function scanStatements(
  text: string,
  tokens?: TokenStore,
  options: ParseOptions = {},
): StatementSpan[] {
  const statements: StatementSpan[] = [];
  forEachStatement(text, (statement) => statements.push(statement), tokens, options);
  return statements;
}

/**
 * Calls `visit` with each statement of `text` as `scanStatements` would return them, for callers
 * that keep only part of each; throws like it, after the statements before.
 */
export function forEachStatement(
  text: string,
  visit: (statement: StatementSpan) => void,
  tokens?: TokenStore,
  options: ParseOptions = {},
): void {
  const standardConformingStrings =
    tokens?.standardConformingStrings ?? options.standardConformingStrings ?? true;
  const lexer = new Lexer(text, 0, text.length, standardConformingStrings);
  const boundary = new StatementBoundary(text);
  const builder = new NormalisedTextBuilder(text);
  let start = -1;
  let sqlStart = -1;
  let end = -1;
  let plainStringBackslash = false;
  let sawPlainStringBackslash = false;
  let firstToken = 0;
  let tokenCount = 0;
  const finishStatement = (terminated: boolean): void => {
    const text = builder.finish();
    visit({ start, sqlStart, end, terminated, text, plainStringBackslash, firstToken, tokenCount });
    start = -1;
  };
  for (;;) {
    const kind = lexer.next();
    if (kind === 'end') break;
    if (lexer.plainStringBackslash) {
      plainStringBackslash = true;
      sawPlainStringBackslash = true;
    }
    if (lexer.unterminated) {
      const where = new PositionTracker(text).at(lexer.start);
      throw new UnterminatedTextError(kind, where, sawPlainStringBackslash);
    }
    if (kind === 'comment') {
      // A block comment before the first token opens the text to execute (see sqlStart).
      if (start < 0 && sqlStart < 0 && text.charCodeAt(lexer.start) === SLASH) {
        sqlStart = lexer.start;
      }
      continue;
    }
    if (boundary.endsStatement(kind, lexer.start, lexer.end)) {
      if (start >= 0) finishStatement(true);
      sqlStart = -1;
      boundary.reset();
      continue;
    }
    if (start < 0) {
      start = lexer.start;
      if (sqlStart < 0) sqlStart = start;
      plainStringBackslash = lexer.plainStringBackslash;
      firstToken = tokens === undefined ? 0 : tokens.kinds.length;
      tokenCount = 0;
    }
    end = lexer.end;
    builder.add(lexer.start, lexer.end);
    tokenCount++;
    tokens?.push(kind, lexer.start, lexer.end);
  }
  if (start >= 0) finishStatement(false);
}
