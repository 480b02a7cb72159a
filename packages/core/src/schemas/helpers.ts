/**
 * Small builders over TypeBox for the shapes TypeBox does not name: `oneOf` (TypeBox's unions are
 * `anyOf`, which would let a body match two error shapes at once) and a string `enum`.
 */
import {
  Type,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox';

/** Exactly one of `schemas` matches; the static type is their union. */
export function OneOf<T extends TSchema[]>(
  schemas: [...T],
  options: SchemaOptions = {},
): TUnsafe<Static<T[number]>> {
  return Type.Unsafe<Static<T[number]>>({ ...options, oneOf: schemas });
}

/**
 * A string from a fixed list, written as `enum` (TypeBox writes a union of `const`s as `anyOf`,
 * which says the same less readably).
 */
export function StringEnum<T extends string>(
  values: readonly T[],
  options: SchemaOptions = {},
): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, type: 'string', enum: values });
}
