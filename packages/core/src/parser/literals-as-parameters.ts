/**
 * A statement's text with every literal (strings of every kind, numbers) replaced by a numbered
 * parameter from tokens, as pg_stat_statements shows queries: logs, metrics and traces show only
 * this, so no value a caller sent leaves the process (docs/decisions.md 10.25). Numbering continues
 * after the statement's own highest `$n`. Where standard_conforming_strings would change where a
 * string ends, nothing from it on is shown: `SELECT $1 …`.
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
