import { isWord, type TokenKind } from './lexer';
import { scanStatements, TokenStore, type StatementSpan } from './splitter';
import { parseStatementTree } from './tree';

/**
 * The tokens of one normalised statement, read from the splitter's shared arrays (per-token
 * objects made classification allocation-bound), and its syntax tree when asked for.
 */
export class StatementContext {
  private readonly source: string;
  private readonly kinds: TokenKind[];
  private readonly starts: number[];
  private readonly ends: number[];
  /** Index of the statement's first token in the arrays above. */
  private readonly first: number;
  /** Number of tokens. */
  readonly length: number;
  /**
   * libpg-query would read the text differently from the target: it always lexes with
   * standard_conforming_strings on, and this statement was lexed with it off and holds a '...'
   * string with a backslash. Its tree is then taken as unknown, never as a misread statement.
   */
  readonly treeMisreadsText: boolean;
  private tree: unknown = undefined;

  /**
   * @param text the normalised statement (what the syntax tree is parsed from)
   * @param tokens its tokens as the splitter stored them, to avoid lexing twice; when absent,
   *   `text` is lexed here
   */
  constructor(
    readonly text: string,
    tokens?: { store: TokenStore; span: StatementSpan },
  ) {
    if (tokens === undefined) {
      const store = new TokenStore(text);
      const [span] = scanStatements(text, store);
      tokens = { store, span: span ?? EMPTY_SPAN };
    }
    const { store, span } = tokens;
    this.source = store.source;
    this.kinds = store.kinds;
    this.starts = store.starts;
    this.ends = store.ends;
    this.first = span.firstToken;
    this.length = span.tokenCount;
    this.treeMisreadsText = span.plainStringBackslash && !store.standardConformingStrings;
  }

  kind(i: number): TokenKind | undefined {
    return i < 0 || i >= this.length ? undefined : this.kinds[this.first + i];
  }

  /** The syntax tree has been parsed (for measuring how often classification needs it). */
  get treeWasParsed(): boolean {
    return this.tree !== undefined;
  }

  /** The statement's syntax tree, or null when PostgreSQL's grammar rejects it. */
  syntaxTree(): unknown {
    if (this.tree === undefined)
      this.tree = this.treeMisreadsText ? null : parseStatementTree(this.text);
    return this.tree;
  }

  /** The text of token `i`, as written (empty past the ends). */
  tokenText(i: number): string {
    if (this.kind(i) === undefined) return '';
    return this.source.slice(this.starts[this.first + i], this.ends[this.first + i]);
  }

  /** Length of token `i` in UTF-16 code units (0 past the ends). */
  tokenLength(i: number): number {
    if (this.kind(i) === undefined) return 0;
    return this.ends[this.first + i]! - this.starts[this.first + i]!;
  }

  /** The ASCII letter at `offset` in token `i`, lower-cased; other characters as they are. */
  letterAt(i: number, offset = 0): string {
    if (this.kind(i) === undefined) return '';
    const c = this.source.charCodeAt(this.starts[this.first + i]! + offset);
    return String.fromCharCode(c >= 65 && c <= 90 ? c + 32 : c);
  }

  /** The lower-case word at token `i`, or undefined when that token is not a word. */
  word(i: number): string | undefined {
    return this.kind(i) === 'word' ? this.tokenText(i).toLowerCase() : undefined;
  }

  /** Token `i` is the word `lowerCaseWord`, in any case (no allocation). */
  isWord(i: number, lowerCaseWord: string): boolean {
    if (this.kind(i) !== 'word') return false;
    return isWord(
      this.source,
      this.starts[this.first + i]!,
      this.ends[this.first + i]!,
      lowerCaseWord,
    );
  }

  /** Token `i` is the one-character punctuation or operator `char`. */
  isChar(i: number, char: string): boolean {
    const kind = this.kind(i);
    if (kind !== 'punctuation' && kind !== 'operator') return false;
    const start = this.starts[this.first + i]!;
    return (
      this.ends[this.first + i] === start + 1 &&
      this.source.charCodeAt(start) === char.charCodeAt(0)
    );
  }

  /** The name an identifier token denotes: unquoted words fold to lower case, quoted ones do not. */
  identifierName(i: number): string | undefined {
    const kind = this.kind(i);
    if (kind === 'word') return this.tokenText(i).toLowerCase();
    if (kind !== 'quoted-ident') return undefined;
    const text = this.tokenText(i);
    if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return undefined;
    return text.slice(1, -1).replace(/""/g, '"');
  }

  /** Index after the parenthesised list that opens at `i`, or `i` when there is none there. */
  skipParentheses(i: number): number {
    if (!this.isChar(i, '(')) return i;
    let depth = 0;
    for (let j = i; j < this.length; j++) {
      if (this.isChar(j, '(')) depth++;
      else if (this.isChar(j, ')') && --depth === 0) return j + 1;
    }
    return this.length;
  }

  /** Some word from token `from` on is one of `words`. */
  hasWord(from: number, ...words: string[]): boolean {
    for (let i = from; i < this.length; i++) {
      for (const word of words) if (this.isWord(i, word)) return true;
    }
    return false;
  }
}

const EMPTY_SPAN: StatementSpan = {
  start: 0,
  sqlStart: 0,
  end: 0,
  terminated: false,
  text: '',
  plainStringBackslash: false,
  firstToken: 0,
  tokenCount: 0,
};
