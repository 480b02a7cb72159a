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
