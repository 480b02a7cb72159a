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

export function isJsonText(text: string): boolean {
  const length = text.length;
  const stack: Container[] = [];
  let i = 0;
  let expect = Expect.Value;

  const skipSpace = (): void => {
    while (i < length) {
      const code = text.charCodeAt(i);
      if (code !== SPACE && code !== TAB && code !== LF && code !== CR) return;
      i++;
    }
  };

  /** Moves past a string starting at `i`; false when it is not one. */
  const string = (): boolean => {
    i++; // the opening quote
    while (i < length) {
      const code = text.charCodeAt(i++);
      if (code === QUOTE) return true;
      if (code < 0x20) return false;
      if (code === BACKSLASH) {
        const escape = text[i++];
        if (escape === 'u') {
          for (let k = 0; k < 4; k++) if (!isHex(text.charCodeAt(i++))) return false;
        } else if (escape === undefined || !'"\\/bfnrt'.includes(escape)) {
          return false;
        }
      }
    }
    return false;
  };

  const digits = (): boolean => {
    const start = i;
    while (i < length && isDigit(text.charCodeAt(i))) i++;
    return i > start;
  };

  const number = (): boolean => {
    if (text.charCodeAt(i) === MINUS) i++;
    if (text.charCodeAt(i) === ZERO) i++;
    else if (!digits()) return false;
    if (text.charCodeAt(i) === DOT) {
      i++;
      if (!digits()) return false;
    }
    const code = text.charCodeAt(i);
    if (code === 0x65 || code === 0x45) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === PLUS || sign === MINUS) i++;
      if (!digits()) return false;
    }
    return true;
  };

  const literal = (word: string): boolean => {
    if (!text.startsWith(word, i)) return false;
    i += word.length;
    return true;
  };

  for (;;) {
    skipSpace();
    const code = text.charCodeAt(i);
    switch (expect) {
      case Expect.Value:
        if (code === OPEN_OBJECT) {
          i++;
          stack.push(Container.Object);
          expect = Expect.KeyOrEnd;
          continue;
        }
        if (code === OPEN_ARRAY) {
          i++;
          skipSpace();
          if (text.charCodeAt(i) === CLOSE_ARRAY) i++;
          else {
            stack.push(Container.Array);
            continue;
          }
        } else if (code === QUOTE) {
          if (!string()) return false;
        } else if (code === MINUS || isDigit(code)) {
          if (!number()) return false;
        } else if (!literal('true') && !literal('false') && !literal('null')) {
          return false;
        }
        expect = Expect.AfterValue;
        continue;
      case Expect.KeyOrEnd:
      case Expect.Key:
        if (expect === Expect.KeyOrEnd && code === CLOSE_OBJECT) {
          i++;
          stack.pop();
          expect = Expect.AfterValue;
          continue;
        }
        if (code !== QUOTE || !string()) return false;
        skipSpace();
        if (text.charCodeAt(i) !== COLON) return false;
        i++;
        expect = Expect.Value;
        continue;
      case Expect.AfterValue: {
        const top = stack[stack.length - 1];
        if (top === undefined) return i === length;
        if (code === COMMA) {
          i++;
          expect = top === Container.Object ? Expect.Key : Expect.Value;
          continue;
        }
        if (code !== (top === Container.Object ? CLOSE_OBJECT : CLOSE_ARRAY)) return false;
        i++;
        stack.pop();
        continue;
      }
    }
  }
}
