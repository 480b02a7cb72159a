/** Hand-made parsed statements, so execution rules are tested without the parser. */
import type { ParsedStatement, StatementClass } from '../../src/parser/types';
import type { QueryOptions } from '../../src/request';
import { parsedStatement } from '../statement-fixture';

export function statement(
  statementClass: StatementClass,
  overrides: Partial<ParsedStatement> = {},
): ParsedStatement {
  return parsedStatement(overrides.text ?? `${statementClass} statement`, {
    statementClass,
    changesSession: statementClass === 'session' || statementClass === 'transaction-control',
    ...overrides,
  });
}

/** Statements with their indexes set in order. */
export function script(...statements: ParsedStatement[]): ParsedStatement[] {
  return statements.map((each, index) => ({ ...each, index }));
}

export const defaults: QueryOptions = { rowMode: 'object', readOnly: false, dryRun: false };
