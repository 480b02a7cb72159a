export { parseScript, parseSql, splitSql, type ParsedScript } from './parse';
export { loadParser, parserLoaded } from './tree';
export { createParseMemo, type ParseFunction, type ParseMemoOptions } from './parse-memo';
export type { ParseOptions } from './splitter';
export { UnterminatedTextError } from './unterminated';
export type { ParsedStatement, SourcePosition, StatementClass, StatementRelations } from './types';
export { withLiteralsAsParameters } from './literals-as-parameters';
export { roleChangeIn } from './role-guard';
export { runsOnStandby } from './standby-safety';
