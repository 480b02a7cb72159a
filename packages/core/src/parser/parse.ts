import { classifyStatement } from './classify';
import { advancePosition, offsetOfCharacter, PositionTracker } from './positions';
import {
  forEachStatement,
  scanStatements,
  TokenStore,
  type ParseOptions,
  type StatementSpan,
} from './splitter';
import { Statement } from './statement';
import { assertParserLoaded } from './tree';
import type { ParsedStatement, SourcePosition } from './types';

/** The statements of one text, and whether the target's string setting could change them. */
export interface ParsedScript {
  statements: readonly ParsedStatement[];
  /**
   * A plain '...' string holds a backslash: with the other standard_conforming_strings setting the
   * split or a statement's meaning may differ (docs/decisions.md 10.11). False for almost every text.
   */
  dependsOnStringSetting: boolean;
}

/**
 * Splits `text` into statements and normalises each: comments removed, whitespace outside literals
 * collapsed to one space, trimmed, without the terminating `;`. Literals, quoted identifiers and
 * dollar bodies are kept byte for byte. Needs no `loadParser()`.
 *
 * @throws UnterminatedTextError (a RequestError, INVALID_REQUEST) when a string, quoted
 *   identifier, dollar quote or block comment is never closed
 * @example
 * splitSql("SELECT 'a  b'; -- note\nSELECT  2;") // ["SELECT 'a  b'", 'SELECT 2']
 */
export function splitSql(text: string, options: ParseOptions = {}): string[] {
  const texts: string[] = [];
  forEachStatement(text, (statement) => texts.push(statement.text), undefined, options);
  return texts;
}

/**
 * Splits, normalises and classifies `text` (docs/decisions.md section 1), once `loadParser()` has
 * resolved. Each statement's `sql` is its text as written (10.9); `relations` is computed lazily.
 *
 * @throws UnterminatedTextError as `splitSql` does
 * @example
 * await loadParser();
 * const [statement] = parseSql('SELECT * FROM t FOR UPDATE');
 * statement.statementClass; // 'write'
 */
export function parseSql(text: string, options: ParseOptions = {}): ParsedStatement[] {
  return parseScript(text, options).statements as ParsedStatement[];
}

/** `parseSql`, telling also whether the string setting matters (see ParsedScript). */
export function parseScript(text: string, options: ParseOptions = {}): ParsedScript {
  assertParserLoaded();
  const positions = new PositionTracker(text);
  const store = new TokenStore(text, options.standardConformingStrings ?? true);
  const spans = scanStatements(text, store);
  const statements: ParsedStatement[] = [];
  let dependsOnStringSetting = false;
  for (let index = 0; index < spans.length; index++) {
    const span = spans[index]!;
    if (span.plainStringBackslash) dependsOnStringSetting = true;
    // sqlStart <= start, and both grow from one statement to the next: the tracker walks forward.
    const sqlStart = positions.at(span.sqlStart);
    const start = span.start === span.sqlStart ? sqlStart : positions.at(span.start);
    statements.push(toParsedStatement(text, span, index, sqlStart, start, store));
  }
  return { statements, dependsOnStringSetting };
}

function toParsedStatement(
  source: string,
  span: StatementSpan,
  index: number,
  sqlStart: SourcePosition,
  start: SourcePosition,
  store: TokenStore,
): ParsedStatement {
  const classification = classifyStatement(span.text, { store, span });
  // Most statements hold no comment and no gap to collapse: their text already is what runs.
  const sql =
    span.text.length === span.end - span.sqlStart && source.startsWith(span.text, span.sqlStart)
      ? span.text
      : source.slice(span.sqlStart, span.end);
  return new Statement({
    span,
    sql,
    index,
    start,
    classification,
    locate: locator(source, sqlStart, span.end),
  });
}

/**
 * `locate()` of a statement: `position` counts characters of the executed text, from `sqlStart`;
 * in its own scope so the closure keeps no tokens alive.
 */
function locator(
  source: string,
  sqlStart: SourcePosition,
  end: number,
): (position: number) => SourcePosition {
  return (position) =>
    advancePosition(source, sqlStart, offsetOfCharacter(source, position, sqlStart.offset, end));
}
