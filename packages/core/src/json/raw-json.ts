/**
 * A JSON value kept as the exact text PostgreSQL sent (docs/decisions.md 10.13): big numbers,
 * `1.10`, duplicate keys and key order survive because nothing parses it. `serializeResponse`
 * writes the text into the response verbatim.
 */
import { PLACEHOLDER, splice } from './splice-state';

export class RawJson {
  /** @param text Valid JSON, as PostgreSQL produced it; never checked here. */
  constructor(readonly text: string) {}

  /**
   * Inside `serializeResponse`: a placeholder that is swapped for the text afterwards. Anywhere
   * else (a library caller's own JSON.stringify): the parsed value, so the output stays valid JSON.
   */
  toJSON(): unknown {
    const { texts } = splice;
    if (texts === null) return parsedOrText(this.text);
    texts.push(this.text);
    return PLACEHOLDER;
  }
}

/** The value of JSON text; the text itself when it does not parse (conversion never throws). */
export function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * `value` with every RawJson (also inside arrays) replaced by its parsed value: what a library
 * caller that did not ask for raw JSON text receives. Returns `value` itself when it holds none.
 */
export function parseRawJson(value: unknown): unknown {
  if (value instanceof RawJson) return parsedOrText(value.text);
  if (!Array.isArray(value)) return value;
  let copy: unknown[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    const parsed = parseRawJson(item);
    if (parsed !== item) {
      copy ??= value.slice();
      copy[i] = parsed;
    }
  }
  return copy ?? value;
}
