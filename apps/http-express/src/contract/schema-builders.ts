/**
 * Small builders over TypeBox for the shapes TypeBox does not name: `oneOf` (TypeBox's unions are
 * `anyOf`, which would let a body match two error shapes at once), a string `enum`, JSON Schema's
 * nullable types, bounded numbers and a position in the SQL text.
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

/** An integer of at least 0, or null. */
export function NullableInteger(options: SchemaOptions = {}): TUnsafe<number | null> {
  return Type.Unsafe<number | null>({ ...options, type: ['integer', 'null'], minimum: 0 });
}

/** A string, or null. */
export function NullableString(options: SchemaOptions = {}): TUnsafe<string | null> {
  return Type.Unsafe<string | null>({ ...options, type: ['string', 'null'] });
}

export const NonNegativeNumber = (description: string) => Type.Number({ minimum: 0, description });
export const NonNegativeInteger = (description: string) =>
  Type.Integer({ minimum: 0, description });

/** Line and column (1-based) within the submitted SQL text. */
export const Location = (description: string, closed: boolean) =>
  Type.Object(
    { line: Type.Integer({ minimum: 1 }), column: Type.Integer({ minimum: 1 }) },
    closed ? { description, additionalProperties: false } : { description },
  );
