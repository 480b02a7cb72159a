/**
 * Targets the server itself is configured with, which a request may use instead of naming a
 * target in its own fields: the default target, where a body that names none of host, port, user
 * and database runs (the embedded database of `sqlgate --demo`, docs/decisions.md 10.48); and a
 * named connection of CONFIG_FILE, which a body names with `connection` once its credentials were
 * admitted to it (docs/decisions.md 12).
 */
import { codedError, ErrorCodes, RequestError, type ConnectionTarget } from '@sqlgate/core';

export interface ConfiguredTargets {
  /** Where a body that names none of host, port, user and database runs. */
  default?: ConnectionTarget;
  /**
   * The connections of CONFIG_FILE by name; present only once the request's credentials were
   * admitted to the one it names (access/admission.ts).
   */
  connections?: ReadonlyMap<string, ConnectionTarget>;
}

/** The fields that name a target: a body with none of them uses the default target. */
const NAMING_FIELDS = ['host', 'port', 'user', 'database'] as const;
/** Fields that belong to a target the body names. */
const TARGET_ONLY_FIELDS = ['password', 'sslMode'] as const;

/** A field that was not sent, or sent null or empty, counts as absent, as for required fields. */
export function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/**
 * The configured target a body selects, or undefined when it names a target of its own or the
 * server has none configured. A body that names no target but sends a password or an sslMode is
 * refused: they would be dropped, and the caller would not learn that they were.
 */
export function configuredTargetOf(
  fields: Record<string, unknown>,
  targets: ConfiguredTargets | undefined,
): ConnectionTarget | undefined {
  if (!isAbsent(fields['connection'])) return namedTargetOf(fields, targets?.connections);
  const target = targets?.default;
  if (target === undefined || NAMING_FIELDS.some((name) => !isAbsent(fields[name]))) {
    return undefined;
  }
  const stray = TARGET_ONLY_FIELDS.filter((name) => !isAbsent(fields[name]));
  if (stray.length > 0) {
    const named = stray.map((name) => `'${name}'`).join(' and ');
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `${named} ${stray.length === 1 ? 'belongs' : 'belong'} to a target the request names: send host, port, user and database with ${stray.length === 1 ? 'it' : 'them'}, or none of these fields to use the server's default target`,
    );
  }
  return target;
}

/**
 * The named connection a body with `connection` runs on. Admission resolved it, so without one
 * the request sent no credentials; a body that also names a target of its own is refused, as
 * neither could be silently ignored.
 */
function namedTargetOf(
  fields: Record<string, unknown>,
  connections: ReadonlyMap<string, ConnectionTarget> | undefined,
): ConnectionTarget {
  const stray = [...NAMING_FIELDS, ...TARGET_ONLY_FIELDS].filter((name) => !isAbsent(fields[name]));
  if (stray.length > 0) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `'connection' names the target: send it or ${stray.map((name) => `'${name}'`).join(', ')}, not both`,
    );
  }
  if (connections === undefined) {
    throw codedError(
      ErrorCodes.UNAUTHORIZED,
      "A named connection needs an API key or a token: send 'Authorization: Bearer <key or token>'",
    );
  }
  const name = fields['connection'];
  const target = typeof name === 'string' ? connections.get(name) : undefined;
  if (target === undefined) {
    throw codedError(ErrorCodes.FORBIDDEN, 'These credentials may not use this connection');
  }
  return target;
}
