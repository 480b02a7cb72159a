/**
 * `{ ...base, ...fields }` for code on every request: V8 gives a spread literal a new hidden class
 * each time, `Object.assign` onto `{}` costs a tenth of that (docs/decisions.md 10.29).
 */
export function withFields<T extends object, U extends object>(base: T, fields: U): T & U {
  // Object.assign would give the copy the prototype named by an own `__proto__` property (which
  // JSON.parse makes); a spread copies it as data.
  if (Object.hasOwn(base, '__proto__')) return { ...base, ...fields };
  return Object.assign({}, base, fields);
}
