import { ErrorCodes, RequestError } from '../errors';
import type { TokenKind } from './lexer';
import type { SourcePosition } from './types';

/** How the message names each construct that can be left open. */
const WHAT: Partial<Record<TokenKind, string>> = {
  string: 'string',
  'quoted-ident': 'quoted identifier',
  'dollar-string': 'dollar-quoted string',
  comment: 'block comment',
};

/**
 * The text opens a string, quoted identifier, dollar quote or block comment and never closes it:
 * refused before any connection is made (docs/decisions.md 10.10), with its `location`.
 */
export class UnterminatedTextError extends RequestError {
  /**
   * A plain '...' string holding a backslash came before the end of the text, so with the other
   * standard_conforming_strings setting the text may well be complete.
   */
  readonly dependsOnStringSetting: boolean;

  constructor(kind: TokenKind, start: SourcePosition, dependsOnStringSetting: boolean) {
    const location = { line: start.line, column: start.column };
    super(
      ErrorCodes.INVALID_REQUEST,
      `Unterminated ${WHAT[kind] ?? kind} starting at line ${location.line}, column ${location.column}`,
      { location },
    );
    this.dependsOnStringSetting = dependsOnStringSetting;
  }
}
