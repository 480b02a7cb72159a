/**
 * Shape checks for what another process sent. A message crosses a process boundary as JSON, so its
 * type is a claim until checked; a guard answers the checked value, or undefined, and never throws.
 */
export type Guard<T> = (value: unknown) => T | undefined;

/** The type a guard lets through. */
export type Guarded<G> = G extends Guard<infer T> ? T : never;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A count: a non-negative safe integer. */
export const count: Guard<number> = (value) =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;

/** A finite number that is not negative (a sum of milliseconds). */
export const nonNegative: Guard<number> = (value) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

export const text: Guard<string> = (value) => (typeof value === 'string' ? value : undefined);

export const flag: Guard<boolean> = (value) => (typeof value === 'boolean' ? value : undefined);

/**
 * Any value but undefined: a request body forwarded as its worker parsed it, which the use case
 * that receives it checks as it checks every body.
 */
export const anyValue: Guard<unknown> = (value) => value;

/** One of the listed strings. */
export function oneOf<T extends string>(values: readonly T[]): Guard<T> {
  return (value) => (values.includes(value as T) ? (value as T) : undefined);
}

/** An object with no fields of interest (any object passes; what it holds is ignored). */
export const empty: Guard<Record<string, never>> = (value) => (isRecord(value) ? {} : undefined);

/** `guard`, or null. */
export function nullable<T>(guard: Guard<T>): Guard<T | null> {
  return (value) => (value === null ? null : guard(value));
}

/** An array whose every element passes `guard`. */
export function listOf<T>(guard: Guard<T>): Guard<T[]> {
  return (value) => {
    if (!Array.isArray(value)) return undefined;
    const checked: T[] = [];
    for (const each of value) {
      const item = guard(each);
      if (item === undefined) return undefined;
      checked.push(item);
    }
    return checked;
  };
}

/** An object whose named fields pass their guards; other fields are dropped. */
export function objectOf<Fields extends Record<string, Guard<unknown>>>(
  fields: Fields,
): Guard<{ [K in keyof Fields]: Guarded<Fields[K]> }> {
  return (value) => {
    if (!isRecord(value)) return undefined;
    const checked: Record<string, unknown> = {};
    for (const [name, guard] of Object.entries(fields)) {
      const field = guard(value[name]);
      if (field === undefined) return undefined;
      checked[name] = field;
    }
    return checked as { [K in keyof Fields]: Guarded<Fields[K]> };
  };
}

/** Either of two guards. */
export function either<A, B>(first: Guard<A>, second: Guard<B>): Guard<A | B> {
  return (value) => first(value) ?? second(value);
}
