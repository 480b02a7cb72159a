/**
 * Remembers the statements of recently parsed SQL texts: lexing and classifying is the largest part
 * of sqlgate's own work on a short query, and parsed statements are never changed. One entry serves
 * both standard_conforming_strings settings unless a '...' string holds a backslash (10.11).
 * Bounded by the memory entries hold (docs/decisions.md 10.17); scripts are not kept (10.38).
 */
import { LRUCache } from 'lru-cache';
import { parseScript, type ParsedScript } from './parse';
import type { ParseOptions } from './splitter';
import type { ParsedStatement } from './types';

export interface ParseMemoOptions {
  /** Texts remembered at once. Default 1000. */
  maxEntries?: number;
  /** Longer texts are parsed every time. Default 4096 characters. */
  maxTextLength?: number;
  /** Texts of more statements are parsed every time. Default 16. */
  maxStatements?: number;
  /** Bytes the remembered entries may hold together (estimated, see `estimateEntryBytes`). Default 16 MiB. */
  maxBytes?: number;
}

/**
 * Parses a text as the target reads it. Throws what `parseSql` throws (an unterminated literal).
 */
export type ParseFunction = (text: string, options?: ParseOptions) => ParsedScript;

/** A text's scripts: by setting when they differ, one shared when they cannot. */
interface MemoEntry {
  conforming?: ParsedScript;
  nonConforming?: ParsedScript;
}

/** A memoising parse function that can say how much memory it accounts for. */
export interface ParseMemo extends ParseFunction {
  /** Estimated bytes held by the remembered entries now; never above `maxBytes`. */
  readonly accountedBytes: number;
  /** The bound on `accountedBytes`. */
  readonly maxBytes: number;
}

export const DEFAULT_PARSE_MEMO_MAX_BYTES = 16 * 1024 * 1024;

// Costs measured with `--expose-gc` on Node 20 (heap growth per retained parse result): a parsed
// statement (its object, start position, `locate` and relations closures) holds about 440 bytes
// before its relations are read and about 600 with one relation computed; strings cost up to two
// bytes per character. The estimate rounds up so that the bound holds in practice.
const ENTRY_BYTES = 128; // the LRU node, the key slot and the frozen array
const STATEMENT_BYTES = 512;
const FIELD_BYTES = 32; // a string field's own header
const CHARACTER_BYTES = 2;

const stringBytes = (value: string | null): number =>
  value === null ? 0 : FIELD_BYTES + value.length * CHARACTER_BYTES;

/**
 * Estimated bytes one memo entry holds: its key text and, per parsed statement, a fixed cost plus
 * the strings derived from its tokens.
 */
export function estimateEntryBytes(text: string, statements: readonly ParsedStatement[]): number {
  let bytes = ENTRY_BYTES + stringBytes(text);
  for (const statement of statements) {
    bytes +=
      STATEMENT_BYTES +
      stringBytes(statement.text) +
      // The text to run is the normalised one itself whenever they are equal.
      (statement.sql === statement.text ? 0 : stringBytes(statement.sql)) +
      stringBytes(statement.keyword) +
      stringBytes(statement.unsupported);
  }
  return bytes;
}

/** Estimated bytes of an entry holding one or two scripts. */
function memoEntryBytes(text: string, entry: MemoEntry): number {
  const { conforming, nonConforming } = entry;
  let bytes = 0;
  if (conforming) bytes += estimateEntryBytes(text, conforming.statements);
  if (nonConforming && nonConforming !== conforming) {
    bytes += estimateEntryBytes(text, nonConforming.statements);
  }
  return bytes;
}

/**
 * A parse function that remembers recent results, bounded in entries and in estimated bytes.
 *
 * @example
 * const parse = createParseMemo();
 * parse('SELECT 1') === parse('SELECT 1'); // true
 * parse.accountedBytes <= parse.maxBytes; // always
 */
export function createParseMemo(options: ParseMemoOptions = {}): ParseMemo {
  const maxTextLength = options.maxTextLength ?? 4096;
  const maxStatements = options.maxStatements ?? 16;
  const maxBytes = options.maxBytes ?? DEFAULT_PARSE_MEMO_MAX_BYTES;
  const memo = new LRUCache<string, MemoEntry>({
    max: options.maxEntries ?? 1000,
    maxSize: maxBytes,
    // An entry larger than the whole bound is not kept (lru-cache skips it) and is parsed each time.
    sizeCalculation: (entry, text) => memoEntryBytes(text, entry),
  });
  const parse: ParseFunction = (text, parseOptions = {}) => {
    if (text.length > maxTextLength) return parseScript(text, parseOptions);
    const conforming = parseOptions.standardConformingStrings ?? true;
    const entry = memo.get(text) ?? {};
    const known = conforming ? entry.conforming : entry.nonConforming;
    if (known) return known;
    const script = parseScript(text, { standardConformingStrings: conforming });
    if (script.statements.length > maxStatements) return script;
    Object.freeze(script.statements);
    Object.freeze(script);
    if (!script.dependsOnStringSetting) {
      entry.conforming = script;
      entry.nonConforming = script;
    } else if (conforming) entry.conforming = script;
    else entry.nonConforming = script;
    // Set again after every change, so the entry's size is counted anew.
    memo.set(text, entry);
    return script;
  };
  return Object.defineProperties(parse, {
    accountedBytes: { get: () => memo.calculatedSize, enumerable: true },
    maxBytes: { value: maxBytes, enumerable: true },
  }) as ParseMemo;
}
