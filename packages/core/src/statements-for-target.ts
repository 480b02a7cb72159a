/**
 * Parses a request's SQL the way its target server will read it (docs/decisions.md 10.11).
 *
 * Where a statement ends depends on the target's `standard_conforming_strings` only when a plain
 * '...' string holds a backslash. The provider knows the setting once a connection to the target
 * has started (the server reports it then). When it does not know yet, the text is parsed with
 * PostgreSQL's default (on); only a text the setting could change costs more: one connection is
 * borrowed and given back, unused, so the server reports its setting, and the text is parsed again
 * with it. That connection stays in the pool for the request's own statements. Every other text
 * pays nothing (the parse reports whether the setting mattered as a by-product of lexing).
 */
import { UnterminatedTextError, type ParseFunction, type ParsedStatement } from './parser';
import type { ConnectionProvider, ConnectionTarget } from './ports/connections';
import type { AbortSignalLike } from './ports/abort-signal';
import type { Settled } from './ports/settled';

export interface StatementsForTargetOptions {
  parse: ParseFunction;
  /**
   * The target must have passed the target policy already (docs/decisions.md 10.17). A session
   * passes its own connection, whose settings may differ from its pool's.
   */
  connections: Pick<ConnectionProvider, 'acquire' | 'serverSettings'>;
  /** Aborting gives up waiting for that connection. */
  signal?: AbortSignalLike | undefined;
}

/**
 * The statements of `sql` as `target` reads them, or why the connection that would tell the
 * target's setting could not be had. Settled at once unless a connection must be borrowed: an
 * await costs a turn of the event loop.
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
