import { Lexer, type TokenKind } from '../../src/parser/lexer';

/** A token as the Lexer reads it: see its fields. */
export interface Token {
  kind: TokenKind;
  start: number;
  end: number;
  unterminated: boolean;
  plainStringBackslash: boolean;
}

/** All tokens of `text` (comments included), as objects. */
export function tokenize(
  text: string,
  from = 0,
  to = text.length,
  standardConformingStrings = true,
): Token[] {
  const lexer = new Lexer(text, from, to, standardConformingStrings);
  const tokens: Token[] = [];
  while (lexer.next() !== 'end') {
    tokens.push({
      kind: lexer.kind as TokenKind,
      start: lexer.start,
      end: lexer.end,
      unterminated: lexer.unterminated,
      plainStringBackslash: lexer.plainStringBackslash,
    });
  }
  return tokens;
}
