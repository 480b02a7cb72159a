/**
 * Parses a request's SQL the way its target server will read it (docs/decisions.md 10.11). Only a
 * text whose split depends on an unknown `standard_conforming_strings` costs more: a connection is
 * borrowed, unused, so the server reports its setting, and the text is parsed again with it.
 */
import { UnterminatedTextError, type ParseFunction, type ParsedStatement } from './parser';
import type { ConnectionProvider, ConnectionTarget } from './ports/connections';
import type { AbortSignalLike } from './ports/abort-signal';
import type { Settled } from './ports/settled';

export interface StatementsForTargetOptions {
  parse: ParseFunction;
  /** For a target the policy passed (docs/decisions.md 10.17); a session's own connection. */
  connections: Pick<ConnectionProvider, 'acquire' | 'serverSettings'>;
  /** Aborting gives up waiting for that connection. */
  signal?: AbortSignalLike | undefined;
}

/**
 * The statements of `sql` as `target` reads them, or why no connection could tell the setting.
 * Settled at once unless a connection must be borrowed: an await costs an event loop turn.
 *
 * @throws UnterminatedTextError when the text is incomplete under the target's setting: before any
 *   connection is made, unless a backslash in a '...' string could make it complete
 */
export function statementsForTarget(
  sql: string,
  target: ConnectionTarget,
  options: StatementsForTargetOptions,
): Settled<readonly ParsedStatement[]> | Promise<Settled<readonly ParsedStatement[]>> {
  const { parse, connections } = options;
  // A provider that cannot tell: every target is read with PostgreSQL's default.
  if (!connections.serverSettings) return { ok: true, value: parse(sql).statements };
  const known = connections.serverSettings(target);
  if (known) return { ok: true, value: parse(sql, known).statements };
  try {
    const script = parse(sql);
    if (!script.dependsOnStringSetting) return { ok: true, value: script.statements };
  } catch (error) {
    // Incomplete with the setting on, but a backslash came first: with it off it may be complete.
    if (!(error instanceof UnterminatedTextError && error.dependsOnStringSetting)) throw error;
  }
  return statementsOnceTheTargetTold(sql, target, options);
}

/** Borrows a connection so that the target reports its setting, then parses with it. */
async function statementsOnceTheTargetTold(
  sql: string,
  target: ConnectionTarget,
  options: StatementsForTargetOptions,
): Promise<Settled<readonly ParsedStatement[]>> {
  const { parse, connections } = options;
  const acquired = await connections.acquire(
    target,
    options.signal ? { signal: options.signal } : {},
  );
  if (!acquired.ok) return acquired;
  acquired.value.release();
  return { ok: true, value: parse(sql, connections.serverSettings?.(target) ?? {}).statements };
}
