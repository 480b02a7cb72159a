/**
 * A JSON reader that loses nothing: numbers keep their text, objects keep duplicate keys and their
 * order. The differential test reads sqlgate's responses with it, so a value that JSON.parse would
 * round (a 23-digit number) or merge (duplicate keys) is still compared exactly.
 */

export interface JsonNumber {
  kind: 'number';
  text: string;
}

export interface JsonObject {
  kind: 'object';
  entries: [string, JsonNode][];
}

export type JsonNode = null | boolean | string | JsonNumber | JsonObject | JsonNode[];

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// JSON strings hold no raw control characters: the class must name them.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y;
const SPACE = /[ \t\n\r]*/y;

/** Parses `text` as JSON; throws on anything that is not JSON. */
export function parseLossless(text: string): JsonNode {
  const reader = { text, at: 0 };
  const value = readValue(reader);
  skipSpace(reader);
  if (reader.at !== text.length) throw new Error(`Unexpected text at ${reader.at}`);
  return value;
}

interface Reader {
  text: string;
  at: number;
}

function skipSpace(reader: Reader): void {
  SPACE.lastIndex = reader.at;
  SPACE.exec(reader.text);
  reader.at = SPACE.lastIndex;
}

function match(reader: Reader, pattern: RegExp): string {
  pattern.lastIndex = reader.at;
  const found = pattern.exec(reader.text);
  if (!found)
    throw new Error(
      `Unexpected text at ${reader.at}: ${reader.text.slice(reader.at, reader.at + 20)}`,
    );
  reader.at = pattern.lastIndex;
  return found[0];
}

function expect(reader: Reader, char: string): void {
  skipSpace(reader);
  if (reader.text[reader.at] !== char) throw new Error(`Expected ${char} at ${reader.at}`);
  reader.at++;
}

function readValue(reader: Reader): JsonNode {
  skipSpace(reader);
  const char = reader.text[reader.at];
  if (char === '{') {
    reader.at++;
    const entries: [string, JsonNode][] = [];
    skipSpace(reader);
    if (reader.text[reader.at] === '}') {
      reader.at++;
      return { kind: 'object', entries };
    }
    for (;;) {
      skipSpace(reader);
      const key = JSON.parse(match(reader, STRING)) as string;
      expect(reader, ':');
      entries.push([key, readValue(reader)]);
      skipSpace(reader);
      if (reader.text[reader.at] === ',') reader.at++;
      else {
        expect(reader, '}');
        return { kind: 'object', entries };
      }
    }
  }
  if (char === '[') {
    reader.at++;
    const items: JsonNode[] = [];
    skipSpace(reader);
    if (reader.text[reader.at] === ']') {
      reader.at++;
      return items;
    }
    for (;;) {
      items.push(readValue(reader));
      skipSpace(reader);
      if (reader.text[reader.at] === ',') reader.at++;
      else {
        expect(reader, ']');
        return items;
      }
    }
  }
  if (char === '"') return JSON.parse(match(reader, STRING)) as string;
  if (reader.text.startsWith('true', reader.at)) {
    reader.at += 4;
    return true;
  }
  if (reader.text.startsWith('false', reader.at)) {
    reader.at += 5;
    return false;
  }
  if (reader.text.startsWith('null', reader.at)) {
    reader.at += 4;
    return null;
  }
  return { kind: 'number', text: match(reader, NUMBER) };
}

/** The value of an object's only entry named `key` (response bodies have unique keys). */
export function member(node: JsonNode, key: string): JsonNode | undefined {
  if (node === null || typeof node !== 'object' || Array.isArray(node) || node.kind !== 'object')
    return undefined;
  return node.entries.find(([name]) => name === key)?.[1];
}

/** Structural equality: numbers by their text, objects entry by entry in order. */
export function sameJson(a: JsonNode, b: JsonNode): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => sameJson(item, b[i] as JsonNode))
    );
  }
  if (a.kind === 'number' || b.kind === 'number')
    return a.kind === 'number' && b.kind === 'number' && a.text === b.text;
  return (
    a.entries.length === b.entries.length &&
    a.entries.every(
      ([key, value], i) =>
        key === b.entries[i]?.[0] && sameJson(value, b.entries[i]?.[1] as JsonNode),
    )
  );
}
