/**
 * Targets the server itself is configured with, which a request may use instead of naming a
 * target in its own fields (docs/decisions.md 10.48). There is one kind today: the default
 * target, where a body that names none of host, port, user and database runs (the embedded
 * database of `sqlgate --demo`).
 */
import { ErrorCodes, RequestError, type ConnectionTarget } from '@sqlgate/core';

export interface ConfiguredTargets {
  /** Where a body that names none of host, port, user and database runs. */
  default?: ConnectionTarget;
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
