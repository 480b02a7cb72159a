/** Hand-made parsed statements, so execution rules are tested without the parser. */
import type { ParsedStatement, StatementClass } from '../../src/parser/types';
import type { QueryOptions } from '../../src/request';

export function statement(
  statementClass: StatementClass,
  overrides: Partial<ParsedStatement> = {},
): ParsedStatement {
  const text = overrides.text ?? `${statementClass} statement`;
  return {
    index: 0,
    text,
    terminated: true,
    start: { offset: 0, line: 1, column: 1 },
    end: text.length,
    keyword: text.split(' ')[0]?.toUpperCase() ?? '',
    statementClass,
    relations: { reads: null, writes: null },
    changesSession: statementClass === 'session' || statementClass === 'transaction-control',
    callsVolatileFunction: false,
    unsupported: null,
    locate: (position) => ({ offset: position - 1, line: 1, column: position }),
    ...overrides,
  };
}

/** Statements with their indexes set in order. */
export function script(...statements: ParsedStatement[]): ParsedStatement[] {
  return statements.map((each, index) => ({ ...each, index }));
}

export const defaults: QueryOptions = { rowMode: 'object', readOnly: false, dryRun: false };
