/**
 * What no schema can say about a request's values (docs/decisions.md 10.52): text must reach
 * PostgreSQL as sent (10.12), a number as written (10.8), and `params` may nest only so deep.
 */
import { ErrorCodes, RequestError } from '@sqlgate/core';

/**
 * How deeply `params` values may nest (arrays and objects inside the `params` array). Deeper
 * values are a mistake or an attack, and walking them would exhaust the stack (docs/decisions.md
 * 10.8).
 */
const MAX_PARAM_DEPTH = 32;

/** A NUL, or a UTF-16 surrogate without its partner (with the `u` flag a valid pair is one code point). */
const UNSENDABLE_CHARACTER = /[\0\p{Cs}]/u;

export function invalid(message: string): RequestError {
  return new RequestError(ErrorCodes.INVALID_REQUEST, message);
}

/**
 * Refuses text that cannot reach PostgreSQL as sent (docs/decisions.md 10.12). A NUL ends a
 * string in the protocol: in a startup packet it let a caller add `options` of their own, in a
 * statement it broke the message. A lone surrogate has no UTF-8 form: the encoder would replace
 * it with U+FFFD, silently sending other text than the caller's.
 */
function refuseUnsendableText(value: string, field: string): void {
  refuseUnsendable(value, `'${field}'`, 'which PostgreSQL cannot receive');
}

/**
 * Refuses a field's name holding what no text of a request may hold, as such a value is (10.12):
 * an unknown field's name is echoed in a warning. The refusal does not show the name, since the
 * character it would echo is the problem.
 */
export function refuseUnsendableName(name: string): void {
  refuseUnsendable(name, 'A field name', 'which no field of a request may hold');
}

/**
 * Refuses `value` holding a NUL or a lone surrogate, saying `subject` holds it; a NUL's refusal
 * ends with `whyNotNul`. The value itself is never shown.
 */
export function refuseUnsendable(value: string, subject: string, whyNotNul: string): void {
  const found = UNSENDABLE_CHARACTER.exec(value);
  if (found === null) return;
  if (found[0] === '\0')
    throw invalid(`${subject} contains a NUL character (U+0000), ${whyNotNul}`);
  const code = found[0].charCodeAt(0).toString(16).toUpperCase();
  // Counted in characters, as PostgreSQL and an editor count them, not in UTF-16 units.
  const character = Array.from(value.slice(0, found.index)).length + 1;
  throw invalid(
    `${subject} contains a lone UTF-16 surrogate (U+${code}) at character ${character}, which is not valid Unicode`,
  );
}

/** Refuses unsendable text in each of the `textFields` a body holds. */
export function refuseUnsendableFields(
  fields: Record<string, unknown>,
  textFields: ReadonlySet<string>,
): void {
  // Over the body's few fields rather than the schema's many, most of them absent: reading an
  // absent field by a computed name is what made this the hot path's slowest step.
  for (const field in fields) {
    const value = fields[field];
    if (typeof value === 'string' && textFields.has(field)) refuseUnsendableText(value, field);
  }
}

/** `params[0].name`, `params[1][2]`, `params[0]["a b"]`: built only for an error message. */
function paramPath(keys: readonly (string | number)[]): string {
  let path = 'params';
  for (const key of keys) {
    if (typeof key === 'number') path += `[${key}]`;
    else path += /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return path;
}

/** Significant digits JSON numbers keep through a double without doubt (DBL_DIG). */
const EXACT_DIGITS = 15;

/**
 * Whether a parsed JSON number is surely the number the caller wrote: finite, and within 2^53 or
 * of at most 15 significant digits. Past 2^53 with more digits, it is most likely an integer that
 * JSON parsing rounded before sqlgate saw it (a bigint id), so it is refused rather than sent
 * changed: nothing the caller sent is silently changed (docs/decisions.md 10.8). The HTTP server
 * checks each number's text as well, before parsing.
 */
function isExactNumber(value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (Math.abs(value) <= 2 ** 53) return true;
  // Significant digits only: an integer's trailing zeros are not (1e20 is written with 21 digits).
  const mantissa = String(value).split('e')[0] as string;
  const digits = mantissa
    .replace(/^-?0*\.?0*/, '')
    .replace('.', '')
    .replace(/0+$/, '');
  return digits.length <= EXACT_DIGITS;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Refuses `params` holding a value that would not reach PostgreSQL as sent, or nested too deeply. */
export function refuseUnsendableParams(params: readonly unknown[]): void {
  const keys: (string | number)[] = [];
  for (let index = 0; index < params.length; index++) {
    keys.push(index);
    checkParam(params[index], keys);
    keys.pop();
  }
}

/**
 * Walks a parameter value: strings (and object keys) must be sendable, nesting is bounded. Only
 * arrays and plain objects are entered: a Buffer may hold zero bytes (bytea), and a Date or a
 * library caller's own object is the driver's to convert. `keys` is the way down from `params`,
 * kept as a stack so a long array costs no string per element.
 */
function checkParam(value: unknown, keys: (string | number)[]): void {
  if (typeof value === 'string') {
    if (UNSENDABLE_CHARACTER.test(value)) refuseUnsendableText(value, paramPath(keys));
    return;
  }
  if (typeof value === 'number') {
    if (!isExactNumber(value)) {
      throw invalid(
        `'${paramPath(keys)}' is a number JSON cannot carry exactly (it arrived as ${String(value)}); send it as a string`,
      );
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return;
  // keys holds the params index too: a value nested `depth` levels below it has depth + 1 keys.
  if (keys.length > MAX_PARAM_DEPTH) {
    throw invalid(
      `'params' are nested more than ${MAX_PARAM_DEPTH} levels deep (at '${paramPath(keys)}')`,
    );
  }
  if (isArray) {
    for (let index = 0; index < value.length; index++) {
      keys.push(index);
      checkParam(value[index], keys);
      keys.pop();
    }
    return;
  }
  for (const key of Object.keys(value)) {
    keys.push(key);
    if (UNSENDABLE_CHARACTER.test(key)) refuseUnsendableText(key, `${paramPath(keys)} (key)`);
    checkParam(value[key], keys);
    keys.pop();
  }
}
