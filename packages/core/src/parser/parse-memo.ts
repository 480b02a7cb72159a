/**
 * Remembers the statements of recently parsed SQL texts. Applications send the same texts again and
 * again; lexing and classifying them each time is the largest piece of sqlgate's own work on a
 * short query. Parsed statements are never changed after parsing, so one result can serve every
 * request with the same text. Long texts are not kept: they are rarely repeated and would crowd out
 * the short ones.
 */
import { LRUCache } from 'lru-cache';
import { parseSql } from './parse';
import type { ParsedStatement } from './types';

export interface ParseMemoOptions {
  /** Texts remembered at once. Default 1000. */
  maxEntries?: number;
  /** Longer texts are parsed every time. Default 4096 characters. */
  maxTextLength?: number;
}

export type ParseFunction = (text: string) => readonly ParsedStatement[];

export function createParseMemo(options: ParseMemoOptions = {}): ParseFunction {
  const maxTextLength = options.maxTextLength ?? 4096;
  const memo = new LRUCache<string, readonly ParsedStatement[]>({
    max: options.maxEntries ?? 1000,
  });
  return (text) => {
    if (text.length > maxTextLength) return parseSql(text);
    let statements = memo.get(text);
    if (!statements) {
      statements = Object.freeze(parseSql(text));
      memo.set(text, statements);
    }
    return statements;
  };
}
