/**
 * Whether a text is one complete JSON value (RFC 8259), checked without building anything. A json
 * value is spliced into a response as its text (docs/decisions.md 10.13), so a text that is not
 * JSON (from a broken or malicious server, or a binary-coercible cast into json) could change the
 * structure of the whole response. Such a text is returned as a string instead (10.3).
 */

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isDigit = (code: number): boolean => code >= ZERO && code <= NINE;
const isHex = (code: number): boolean =>
  isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);

/** What the scanner expects next. */
const enum Expect {
  Value,
  KeyOrEnd,
  Key,
  AfterValue,
}

const enum Container {
  Array,
  Object,
}

/** What failed: the text is not JSON. */
const NOT_JSON = -1;

export function isJsonText(text: string): boolean {
  const scan = new JsonScanner(text);
  const stack: Container[] = [];
  let expect: Expect | typeof NOT_JSON = Expect.Value;
  for (;;) {
    scan.skipSpace();
    const code = scan.code();
    switch (expect) {
      case Expect.Value:
        expect = valueStart(scan, code, stack);
        break;
      case Expect.KeyOrEnd:
      case Expect.Key:
        expect = keyOrEnd(scan, code, stack, expect);
        break;
      case Expect.AfterValue: {
        const top = stack[stack.length - 1];
        if (top === undefined) return scan.atEnd();
        expect = afterValue(scan, code, stack, top);
        break;
      }
      default:
        return false;
    }
  }
}

/** A value begins at `code`: a container is entered, anything else moved past. */
function valueStart(scan: JsonScanner, code: number, stack: Container[]): Expect | typeof NOT_JSON {
  if (code === OPEN_OBJECT) {
    scan.i++;
    stack.push(Container.Object);
    return Expect.KeyOrEnd;
  }
  if (code === OPEN_ARRAY) {
    scan.i++;
    scan.skipSpace();
    if (scan.code() !== CLOSE_ARRAY) {
      stack.push(Container.Array);
      return Expect.Value;
    }
    scan.i++;
  } else if (code === QUOTE) {
    if (!scan.string()) return NOT_JSON;
  } else if (code === MINUS || isDigit(code)) {
    if (!scan.number()) return NOT_JSON;
  } else if (!scan.literal('true') && !scan.literal('false') && !scan.literal('null')) {
    return NOT_JSON;
  }
  return Expect.AfterValue;
}

/** A key and its colon, or (right after `{`) the end of the object. */
function keyOrEnd(
  scan: JsonScanner,
  code: number,
  stack: Container[],
  expect: Expect.KeyOrEnd | Expect.Key,
): Expect | typeof NOT_JSON {
  if (expect === Expect.KeyOrEnd && code === CLOSE_OBJECT) {
    scan.i++;
    stack.pop();
    return Expect.AfterValue;
  }
  if (code !== QUOTE || !scan.string()) return NOT_JSON;
  scan.skipSpace();
  if (scan.code() !== COLON) return NOT_JSON;
  scan.i++;
  return Expect.Value;
}

/** After a value inside `top`: a comma, or the end of `top`. */
function afterValue(
  scan: JsonScanner,
  code: number,
  stack: Container[],
  top: Container,
): Expect | typeof NOT_JSON {
  if (code === COMMA) {
    scan.i++;
    return top === Container.Object ? Expect.Key : Expect.Value;
  }
  if (code !== (top === Container.Object ? CLOSE_OBJECT : CLOSE_ARRAY)) return NOT_JSON;
  scan.i++;
  stack.pop();
  return Expect.AfterValue;
}

/** A position in the text; each part's method moves past it, false when the text is not that part. */
class JsonScanner {
  i = 0;
  private readonly length: number;

  constructor(private readonly text: string) {
    this.length = text.length;
  }

  code(): number {
    return this.text.charCodeAt(this.i);
  }

  atEnd(): boolean {
    return this.i === this.length;
  }

  skipSpace(): void {
    while (this.i < this.length) {
      const code = this.text.charCodeAt(this.i);
      if (code !== SPACE && code !== TAB && code !== LF && code !== CR) return;
      this.i++;
    }
  }

  /** A string starting at `i`. */
  string(): boolean {
    const { text, length } = this;
    this.i++; // the opening quote
    while (this.i < length) {
      const code = text.charCodeAt(this.i++);
      if (code === QUOTE) return true;
      if (code < 0x20) return false;
      if (code === BACKSLASH) {
        const escape = text[this.i++];
        if (escape === 'u') {
          for (let k = 0; k < 4; k++) if (!isHex(text.charCodeAt(this.i++))) return false;
        } else if (escape === undefined || !'"\\/bfnrt'.includes(escape)) {
          return false;
        }
      }
    }
    return false;
  }

  number(): boolean {
    if (this.code() === MINUS) this.i++;
    if (this.code() === ZERO) this.i++;
    else if (!this.digits()) return false;
    if (this.code() === DOT) {
      this.i++;
      if (!this.digits()) return false;
    }
    const code = this.code();
    if (code === 0x65 || code === 0x45) {
      this.i++;
      const sign = this.code();
      if (sign === PLUS || sign === MINUS) this.i++;
      if (!this.digits()) return false;
    }
    return true;
  }

  literal(word: string): boolean {
    if (!this.text.startsWith(word, this.i)) return false;
    this.i += word.length;
    return true;
  }

  private digits(): boolean {
    const start = this.i;
    while (this.i < this.length && isDigit(this.text.charCodeAt(this.i))) this.i++;
    return this.i > start;
  }
}
