import { clockInputOfType, namesTheClock } from '../parser/clock-inputs';
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
 * Whether `statement` with `params` may have read the clock through a parameter (docs/decisions.md
 * 10.36): a clock input value of a type (or cast) that may read it; without types, any may.
 */
export function readsClockThroughParameters(
  statement: ParsedStatement,
  params: readonly unknown[] | undefined,
  parameterTypes: readonly number[] | undefined,
): boolean {
  if (params === undefined) return false;
  for (let index = 0; index < params.length; index++) {
    const value = params[index];
    if (value === null || value === undefined) continue;
    const input = clockInputOfType(parameterTypes?.[index]);
    if (input === 'always') return true;
    if (input === 'never' && !statement.castsParameterToClockType) continue;
    if (mayBeClockInput(value)) return true;
  }
  return false;
}

/**
 * Whether a parameter's value may hold a clock word where a date/time input reads it: a string,
 * an array's element (pg sends an array literal of them), or an object's JSON text.
 */
function mayBeClockInput(value: unknown): boolean {
  if (typeof value === 'string') return namesTheClock(value);
  if (Array.isArray(value)) return value.some(mayBeClockInput);
  if (typeof value !== 'object' || value === null) return false;
  try {
    return namesTheClock(JSON.stringify(value) ?? '');
  } catch {
    // Nothing proven: a value that cannot be written as JSON counts as one that may.
    return true;
  }
}

/**
 * Whether a request's statements may use the cache at all: only when every one is a read that
 * leaves the session alone (a read after a write must see it; SET search_path changes its reads).
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
