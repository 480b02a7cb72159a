/**
 * Numbers of a JSON body that parsing would change (docs/decisions.md 10.8: nothing the caller sent
 * is silently changed). JSON.parse rounds every number to a double: `1e-400` becomes 0 and
 * `1.0000000000000000000001` becomes 1, and the parsed value can no longer tell. So the text is
 * read once before parsing, and a number whose digits a double cannot keep is refused.
 */

/** Significant digits any decimal keeps through a double (DBL_DIG). */
const EXACT_DIGITS = 15;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Characters that continue a JSON number once it started. */
function continuesNumber(code: number): boolean {
  return (
    (code >= ZERO && code <= NINE) ||
    code === 0x2e /* . */ ||
    code === 0x65 /* e */ ||
    code === 0x45 /* E */ ||
    code === 0x2b /* + */ ||
    code === MINUS
  );
}

/**
 * Whether parsing keeps the value `literal` (a valid JSON number) writes: the double it parses to is
 * written back (as PostgreSQL receives it) with the same decimal value. The spelling may change:
 * `10.50` is sent as `10.5`, `1E+2` as `100` (docs/decisions.md 10.8).
 */
export function isExactLiteral(literal: string): boolean {
  // At most 15 characters and no exponent: at most 15 digits, which any double keeps (DBL_DIG).
  if (literal.length <= EXACT_DIGITS && !/[eE]/.test(literal)) return true;
  const value = Number(literal);
  return Number.isFinite(value) && decimalValueOf(literal) === decimalValueOf(String(value));
}

/**
 * A decimal literal's value as `<sign><digits>e<exponent>`, the digits without leading or trailing
 * zeros: two spellings of one value give one text (`1.50`, `15e-1` and `0.15E1` give `15e-2`).
 * Zero is `0` whatever its sign: PostgreSQL's numeric has no negative zero.
 */
function decimalValueOf(literal: string): string {
  const match = DECIMAL.exec(literal);
  if (!match) return `not a number: ${literal}`;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = (whole + fraction).replace(/^0+/, '');
  const significant = digits.replace(/0+$/, '');
  if (significant === '') return '0';
  const scale = Number(exponent) - fraction.length + (digits.length - significant.length);
  return `${sign}${significant}e${scale}`;
}

const DECIMAL = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Text that may hold a literal `isExactLiteral` must look at: one with an exponent (a digit before
 * an `e`), or 16 characters without one (a literal is made of `-`, digits and `.` then). Where it
 * matches nothing, every number is short and exact; a match may be in a string, and the scan
 * decides. One regular expression over the text costs a fraction of the scan's loop, which ran on
 * every body (measured: about 2 µs of a SELECT 1 in the server, its string reads not inlined).
 */
const MAY_HOLD_INEXACT = /\d[eE]|[-\d.]{16}/;

/**
 * The first number of a JSON text that a double cannot carry exactly, or undefined. Strings are
 * skipped; the text may be invalid JSON (parsing reports that afterwards).
 */
export function firstInexactNumber(text: string): string | undefined {
  return MAY_HOLD_INEXACT.test(text) ? scanForInexactNumber(text) : undefined;
}

/** Why a JSON text is refused for a number parsing would change, or undefined. */
export function inexactNumberMessage(text: string): string | undefined {
  const inexact = firstInexactNumber(text);
  return inexact === undefined
    ? undefined
    : `The number ${inexact.slice(0, 40)} cannot be carried exactly by JSON; send it as a string`;
}

/** firstInexactNumber without its shortcut: every number literal of the text, in order. */
export function scanForInexactNumber(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code === QUOTE) {
      // Skip the string, escapes included.
      for (i++; i < text.length; i++) {
        code = text.charCodeAt(i);
        if (code === BACKSLASH) i++;
        else if (code === QUOTE) break;
      }
      continue;
    }
    if (code !== MINUS && (code < ZERO || code > NINE)) continue;
    let end = i + 1;
    while (end < text.length && continuesNumber(text.charCodeAt(end))) end++;
    const literal = text.slice(i, end);
    if (!isExactLiteral(literal)) return literal;
    i = end - 1;
  }
  return undefined;
}
