/**
 * Small builders over TypeBox for the response bodies: JSON Schema's nullable types, bounded numbers
 * and a position in the SQL text. `OneOf` and `StringEnum` come from core, whose request schemas use them.
 */
import { Type, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

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
