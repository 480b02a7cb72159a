export { parseSql, splitSql } from './parse';
export { loadParser } from './tree';
export type { ParsedStatement, SourcePosition, StatementClass, StatementRelations } from './types';
