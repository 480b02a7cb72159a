/** A hand-made parsed statement, so rules are tested without the parser. */
import type { ParsedStatement } from '../src/parser/types';

export function parsedStatement(
  text: string,
  overrides: Partial<ParsedStatement> = {},
): ParsedStatement {
  return {
    index: 0,
    text,
    sql: text,
    terminated: true,
    start: { offset: 0, line: 1, column: 1 },
    end: text.length,
    keyword: text.split(' ')[0]?.toUpperCase() ?? '',
    statementClass: 'read',
    relations: { reads: null, writes: null },
    changesSession: false,
    callsVolatileFunction: false,
    castsParameterToClockType: false,
    unsupported: null,
    locate: (position) => ({ offset: position - 1, line: 1, column: position }),
    ...overrides,
  };
}
