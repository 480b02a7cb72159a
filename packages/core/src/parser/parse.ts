import { classifyStatement } from './classify';
import { sourceOffsetOf } from './normalise';
import { advancePosition, offsetOfCharacter, PositionTracker } from './positions';
import { forEachStatement, scanStatements, TokenStore, type StatementSpan } from './splitter';
import { Statement } from './statement';
import { assertParserLoaded } from './tree';
import type { ParsedStatement, SourcePosition } from './types';

/**
 * Splits `text` into statements and normalises each: comments removed, whitespace outside literals
 * collapsed to one space, trimmed, without the terminating `;`. Literals, quoted identifiers and
 * dollar bodies are kept byte for byte. Needs no `loadParser()`.
 *
 * @example
 * splitSql("SELECT 'a  b'; -- note\nSELECT  2;") // ["SELECT 'a  b'", 'SELECT 2']
 */
export function splitSql(text: string): string[] {
  const texts: string[] = [];
  forEachStatement(text, (statement) => texts.push(statement.text));
  return texts;
}

/**
 * Splits, normalises and classifies `text` (DECISIONS.md section 1). Synchronous, but PostgreSQL's
 * parser must have been loaded first with `await loadParser()`.
 *
 * `relations` is computed on first access (it may need the syntax tree, and only the result cache
 * reads it); the value is the same whenever it is read.
 *
 * @example
 * await loadParser();
 * const [statement] = parseSql('SELECT * FROM t FOR UPDATE');
 * statement.statementClass; // 'write'
 */
export function parseSql(text: string): ParsedStatement[] {
  assertParserLoaded();
  const positions = new PositionTracker(text);
  const store = new TokenStore(text);
  return scanStatements(text, store).map((span, index) =>
    toParsedStatement(text, span, index, positions.at(span.start), store),
  );
}

function toParsedStatement(
  source: string,
  span: StatementSpan,
  index: number,
  start: SourcePosition,
  store: TokenStore,
): ParsedStatement {
  const classification = classifyStatement(span.text, { store, span });
  return new Statement(
    span,
    index,
    start,
    classification,
    locator(source, span.text, span.start, span.end, start),
  );
}

/**
 * `locate()` of a statement. Made in its own scope so that the closure keeps only what it needs,
 * not the statement's tokens (which would otherwise live as long as the statement).
 */
function locator(
  source: string,
  text: string,
  spanStart: number,
  spanEnd: number,
  start: SourcePosition,
): (position: number) => SourcePosition {
  return (position) => {
    const normalisedOffset = offsetOfCharacter(text, position);
    return advancePosition(
      source,
      start,
      sourceOffsetOf(source, spanStart, spanEnd, normalisedOffset),
    );
  };
}
