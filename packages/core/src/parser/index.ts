export { parseSql, splitSql } from './parse';
export { loadParser } from './tree';
export { createParseMemo, type ParseFunction, type ParseMemoOptions } from './parse-memo';
export type { ParsedStatement, SourcePosition, StatementClass, StatementRelations } from './types';
