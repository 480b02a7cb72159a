/**
 * What a JSON body's text says that its parsed value can no longer tell (docs/decisions.md 10.8:
 * nothing the caller sent is silently changed). JSON.parse rounds every number to a double
 * (`1e-400` becomes 0, `9007199254740993` becomes 9007199254740992) and keeps the last of a key
 * given twice in one object (`{"sql":"SELECT 1","sql":"DROP TABLE x"}` runs the DROP, while a
 * filtering proxy that read the first `sql` let it through). So the text is read once, after it
 * parsed, and a number whose digits a double cannot keep, or a key given twice, is refused.
 */

/** Significant digits any decimal keeps through a double (DBL_DIG). */
const EXACT_DIGITS = 15;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const SPACE = 0x20;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** Characters that continue a JSON number once it started. */
function continuesNumber(code: number): boolean {
  return (
    (code >= ZERO && code <= NINE) ||
    code === 0x2e /* . */ ||
    code === LOWER_E ||
    code === UPPER_E ||
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
  if (!Number.isFinite(value)) return false;
  // Written back as it came (what JavaScript's own JSON.stringify sends): exact at once.
  const written = String(value);
  return written === literal || decimalValueOf(literal) === decimalValueOf(written);
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

/** A number of a JSON text its parsed value does not keep, and the body's field that holds it. */
export interface InexactNumber {
  literal: string;
  /** The key of the outermost object under which it is, at any depth; none at the top. */
  field: string | undefined;
}

/**
 * What a JSON text's parsed value has lost: the first key given twice in one object (the text is
 * read no further), or else every number parsing changed.
 */
export interface JsonTextFindings {
  duplicateKey?: string;
  inexactNumbers: InexactNumber[];
}

/** The index of the quote that closes the string opened at `open`. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  while (isEscaped(text, end)) end = text.indexOf('"', end + 1);
  return end;
}

/** Whether the character at `at` follows an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/** A key as parsing reads it: `"a"` and `"\u0061"` are one key. */
function keyOf(text: string, open: number, close: number): string {
  const raw = text.slice(open + 1, close);
  return raw.includes('\\') ? (JSON.parse(text.slice(open, close + 1)) as string) : raw;
}

/** Keys an object's list holds before they go into a set: most objects have a handful. */
const LISTED_KEYS = 16;

/** The keys seen so far in one open object: searched in a short list, in a set once it grows. */
class KeysSeen {
  private readonly listed: string[] = [];
  private set: Set<string> | undefined;

  /** Forgets them, for the next object at the same depth. */
  reset(): void {
    this.listed.length = 0;
    this.set = undefined;
  }

  /** Adds `key`; false when it was there already. */
  add(key: string): boolean {
    if (this.set) {
      if (this.set.has(key)) return false;
      this.set.add(key);
      return true;
    }
    if (this.listed.includes(key)) return false;
    this.listed.push(key);
    if (this.listed.length > LISTED_KEYS) this.set = new Set(this.listed);
    return true;
  }
}

/**
 * What a valid JSON text (parse it first: the scan relies on it) lost in parsing, or undefined for
 * nothing. One pass: strings are skipped with `indexOf`, and a number is looked at closely only
 * when it has an exponent or more than 15 characters. Each open object keeps the keys seen in it,
 * reused from object to object.
 */
export function lostInParsing(text: string): JsonTextFindings | undefined {
  const keysByDepth: KeysSeen[] = [];
  let inexactNumbers: InexactNumber[] | undefined;
  let field: string | undefined;
  let depth = 0;
  const { length } = text;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const close = closingQuote(text, i);
      if (close === -1) return undefined; // not valid JSON: parsing has refused it already
      // A string followed by a colon (whitespace may come between) is a key of the open object.
      let next = close + 1;
      while (text.charCodeAt(next) <= SPACE) next++;
      if (text.charCodeAt(next) === COLON) {
        const key = keyOf(text, i, close);
        if (!(keysByDepth[depth - 1] as KeysSeen).add(key)) {
          return { duplicateKey: key, inexactNumbers: inexactNumbers ?? [] };
        }
        if (depth === 1) field = key;
        i = next;
      } else {
        i = close;
      }
    } else if (code === OPEN_BRACE) {
      const keys = keysByDepth[depth];
      if (keys) keys.reset();
      else keysByDepth[depth] = new KeysSeen();
      depth++;
    } else if (code === CLOSE_BRACE) {
      depth--;
    } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
      let end = i + 1;
      let exponent = false;
      for (let next = text.charCodeAt(end); continuesNumber(next); next = text.charCodeAt(++end)) {
        if (next === LOWER_E || next === UPPER_E) exponent = true;
      }
      // At most 15 characters without an exponent: at most 15 digits, exact (no string made).
      if (exponent || end - i > EXACT_DIGITS) {
        const literal = text.slice(i, end);
        if (!isExactLiteral(literal)) {
          (inexactNumbers ??= []).push({ literal, field: depth === 0 ? undefined : field });
        }
      }
      i = end - 1;
    }
  }
  return inexactNumbers && { inexactNumbers };
}

const INEXACT_NUMBERS = Symbol('sqlgate.inexactNumbers');

/**
 * `body` (a parsed JSON object) with the numbers parsing changed in it, for the reader of its
 * fields: only a field sqlgate reads refuses one (an unknown field's value is never read).
 */
export function keepInexactNumbers(body: object, numbers: InexactNumber[]): void {
  Object.defineProperty(body, INEXACT_NUMBERS, { value: numbers, enumerable: false });
}

/** The numbers parsing changed in a body read by `parsedText`; none for any other object. */
export function inexactNumbersOf(body: object): readonly InexactNumber[] {
  return (body as { [INEXACT_NUMBERS]?: InexactNumber[] })[INEXACT_NUMBERS] ?? [];
}

/** The refusal of a key given twice (400). */
export function duplicateKeyMessage(key: string): string {
  return `The key ${JSON.stringify(key.slice(0, 40))} appears twice in one object; send each key once`;
}

/** The refusal of a number JSON cannot carry exactly, where a string can carry it (400). */
export function inexactNumberMessage({ literal, field }: InexactNumber): string {
  const shown = literal.length > 40 ? `${literal.slice(0, 40)}…` : literal;
  const where = field === undefined ? '' : ` in '${field}'`;
  return `The number ${shown}${where} cannot be carried exactly by JSON; send it as a string`;
}
