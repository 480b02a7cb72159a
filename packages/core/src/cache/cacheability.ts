import type { ParsedStatement } from '../parser/types';
import type { CacheRequest } from '../request';

/**
 * A statement whose result may be reused: a read that calls no volatile function and leaves no
 * state in the session. The parser decides each of these; this only combines its answers.
 */
export function isCacheableStatement(statement: ParsedStatement): boolean {
  return (
    statement.statementClass === 'read' &&
    !statement.callsVolatileFunction &&
    !statement.changesSession
  );
}

/**
 * Whether a request's statements may use the cache at all: only when every one is a read that
 * leaves the session alone. A read after a write in the same transaction must see that write (a
 * cached result would not), and its result must not be kept in case the transaction rolls back;
 * after SET search_path or SET ROLE, a statement's text no longer says what it reads.
 */
export function requestMayUseCache(statements: readonly ParsedStatement[]): boolean {
  return statements.every(
    (statement) => statement.statementClass === 'read' && !statement.changesSession,
  );
}

/**
 * Whether the request lets the cache serve and keep its results: an explicit `cache` wins (`false`
 * turns it off even when the server caches by default); absent, the server's default applies.
 */
export function isCacheRequested(
  cache: CacheRequest | undefined,
  enabledByDefault: boolean,
): boolean {
  if (cache === undefined) return enabledByDefault;
  return cache !== false;
}
