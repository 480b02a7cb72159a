/**
 * A statement's text with every literal replaced by a numbered parameter, as pg_stat_statements
 * shows queries: `SELECT * FROM t WHERE id = 42 AND name = 'x'` becomes
 * `SELECT * FROM t WHERE id = $1 AND name = $2`. Logs, metrics and traces show this form only,
 * so that no value a caller sent (a password in an ALTER ROLE, a customer's e-mail) leaves the
 * process through them (docs/decisions.md 10.25).
 *
 * Decided from tokens, not from the syntax tree: strings of every kind (E'', B'', X'', U&'',
 * dollar-quoted) and numbers are literals; a minus sign stays before its `$n`, numbers of a
 * type modifier (`varchar(10)`) are replaced too, and `true`, `false` and `NULL` stay, where
 * PostgreSQL replaces them. Numbering continues after the statement's own highest `$n`, so a
 * replaced literal never reads as one of its parameters.
 *
 * Where a '...' string holds a backslash, where it ends depends on the session's
 * standard_conforming_strings, which a script can change as it runs. When the two readings
 * differ, nothing from that string on is shown: `SELECT $1 …`.
 */
import { Lexer } from './lexer';

const ELIDED = ' …';

export function withLiteralsAsParameters(text: string): string {
  const standard = replaceLiterals(text, true);
  if (standard.firstAmbiguous === undefined) return standard.text;
  const escaped = replaceLiterals(text, false);
  if (escaped.text === standard.text) return standard.text;
  return `${standard.textBeforeAmbiguous}$${standard.parameterAtAmbiguous}${ELIDED}`;
}

interface Replaced {
  text: string;
  /** Offset of the first '...' string holding a backslash, if any. */
  firstAmbiguous?: number;
  /** The replaced text before that string, and the number it got. */
  textBeforeAmbiguous: string;
  parameterAtAmbiguous: number;
}

function replaceLiterals(text: string, standardConformingStrings: boolean): Replaced {
  let next = highestParameterOf(text, standardConformingStrings);
  let result = '';
  let copiedUpTo = 0;
  const replaced: Replaced = { text: '', textBeforeAmbiguous: '', parameterAtAmbiguous: 0 };
  const lexer = new Lexer(text, 0, text.length, standardConformingStrings);
  for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
    if (kind !== 'string' && kind !== 'dollar-string' && kind !== 'number') continue;
    next += 1;
    result += `${text.slice(copiedUpTo, lexer.start)}`;
    if (lexer.plainStringBackslash && replaced.firstAmbiguous === undefined) {
      replaced.firstAmbiguous = lexer.start;
      replaced.textBeforeAmbiguous = result;
      replaced.parameterAtAmbiguous = next;
    }
    result += `$${next}`;
    copiedUpTo = lexer.end;
  }
  replaced.text = copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
  return replaced;
}

function highestParameterOf(text: string, standardConformingStrings: boolean): number {
  let highest = 0;
  const lexer = new Lexer(text, 0, text.length, standardConformingStrings);
  for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
    if (kind === 'parameter')
      highest = Math.max(highest, Number(text.slice(lexer.start + 1, lexer.end)));
  }
  return highest;
}
