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
 * PostgreSQL replaces them. Numbering continues after the statement's own
 * highest `$n`, so a replaced literal never reads as one of its parameters.
 */
import { Lexer } from './lexer';

export function withLiteralsAsParameters(text: string): string {
  let highestParameter = 0;
  const scan = new Lexer(text);
  for (let kind = scan.next(); kind !== 'end'; kind = scan.next()) {
    if (kind === 'parameter') {
      highestParameter = Math.max(highestParameter, Number(text.slice(scan.start + 1, scan.end)));
    }
  }
  let next = highestParameter;
  let result = '';
  let copiedUpTo = 0;
  const lexer = new Lexer(text);
  for (let kind = lexer.next(); kind !== 'end'; kind = lexer.next()) {
    if (kind !== 'string' && kind !== 'dollar-string' && kind !== 'number') continue;
    next += 1;
    result += `${text.slice(copiedUpTo, lexer.start)}$${next}`;
    copiedUpTo = lexer.end;
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}
