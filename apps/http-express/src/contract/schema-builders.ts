/**
 * Small builders over TypeBox for the shapes TypeBox does not name: `oneOf` (TypeBox's unions are
 * `anyOf`, which would let a body match two error shapes at once), a string `enum`, JSON Schema's
 * nullable types, bounded numbers and a position in the SQL text.
 */
import {
  Kind,
  Type,
  TypeRegistry,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';

/** The branches of each `oneOf` schema, compiled the first time a value is checked against it. */
const compiledBranches = new WeakMap<object, TypeCheck<TSchema>[]>();

function matchesExactlyOne(schema: { oneOf: TSchema[] }, value: unknown): boolean {
  let branches = compiledBranches.get(schema);
  if (branches === undefined) {
    branches = schema.oneOf.map((branch) => TypeCompiler.Compile(branch));
    compiledBranches.set(schema, branches);
  }
  let matches = 0;
  for (const branch of branches) if (branch.Check(value)) matches++;
  return matches === 1;
}

// TypeBox's compiler checks only the kinds it knows: these two get kinds of their own, with the
// check their JSON Schema means, so that the schema a body is documented by is the one it is
// checked by (docs/decisions.md 10.52). The kind is a symbol: the JSON Schema does not show it.
TypeRegistry.Set<{ oneOf: TSchema[] }>('OneOf', matchesExactlyOne);
TypeRegistry.Set<{ enum: readonly unknown[] }>('StringEnum', (schema, value) =>
  schema.enum.includes(value),
);

/** Exactly one of `schemas` matches; the static type is their union. */
export function OneOf<T extends TSchema[]>(
  schemas: [...T],
  options: SchemaOptions = {},
): TUnsafe<Static<T[number]>> {
  return Type.Unsafe<Static<T[number]>>({ ...options, [Kind]: 'OneOf', oneOf: schemas });
}

/**
 * A string from a fixed list, written as `enum` (TypeBox writes a union of `const`s as `anyOf`,
 * which says the same less readably).
 */
export function StringEnum<T extends string>(
  values: readonly T[],
  options: SchemaOptions = {},
): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, [Kind]: 'StringEnum', type: 'string', enum: values });
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
