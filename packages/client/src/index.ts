/**
 * @sqlgate/client: sqlgate from any runtime that has fetch (README.md). No Node built-ins.
 */
export { sqlgate, SqlQuery, UnsafeSql } from './sql';
export type { Sql, SqlgateOptions, ClientOptions, QueryOptions, TransactionOptions } from './sql';
export type { AuthToken, TargetOptions } from './target';
export type { FullQueryResult, ReadOptions } from './results';
export type { Field } from './wire';
export { SqlgateError } from './errors';
export { DATE_TIME_AS_TEXT, parserFor, type TypeOverrides, type ValueParser } from './type-parsers';
export { Pool, PoolClient } from './pool';
export { Cursor, type CursorConfig } from './cursor';
export type { PoolOptions, QueryConfig, QueryResult, CustomTypes } from './pool';
