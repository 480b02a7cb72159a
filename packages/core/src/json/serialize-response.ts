/**
 * The response serializer (docs/decisions.md 10.13): JSON.stringify, except that a RawJson is
 * written as its text, verbatim. Node 20 has no JSON.rawJSON, so each RawJson writes a placeholder
 * string during JSON.stringify and one split afterwards puts the texts in their places. A response
 * without RawJson costs exactly one JSON.stringify: no replacer function runs for every value,
 * only RawJson's own toJSON.
 */
import { PLACEHOLDER, withSplice } from './splice-state';

const TOKEN = `"${PLACEHOLDER}"`;

/**
 * `value` as JSON text, like JSON.stringify (`undefined` gives `null`), with every RawJson
 * spliced in as the text it holds.
 *
 * @example
 * serializeResponse({ rows: [{ v: new RawJson('{"n": 12345678901234567890123}') }] })
 * // '{"rows":[{"v":{"n": 12345678901234567890123}}]}'
 */
export function serializeResponse(value: unknown): string {
  const texts: string[] = [];
  const json = withSplice(texts, () => JSON.stringify(value) as string | undefined) ?? 'null';
  if (texts.length === 0) return json;
  // JSON.stringify writes values in the order it called toJSON: the n-th gap is the n-th text.
  const pieces = json.split(TOKEN);
  if (pieces.length !== texts.length + 1) return parsedFallback(value);
  // Concatenation (V8 ropes, flattened once when written) measured twice as fast as join here.
  let out = pieces[0] as string;
  for (let i = 0; i < texts.length; i++) out += (texts[i] as string) + (pieces[i + 1] as string);
  return out;
}

/**
 * Only when the placeholders do not match the texts (a string that is the placeholder, which needs
 * the nonce): valid JSON with RawJson values parsed (outside a splice their toJSON parses) rather
 * than a text in the wrong place.
 */
function parsedFallback(value: unknown): string {
  return (JSON.stringify(value) as string | undefined) ?? 'null';
}
