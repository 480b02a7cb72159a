/**
 * COPY ... TO STDOUT as a streamed answer (docs/decisions.md 10.22): the server's COPY data is the
 * body; only as its request's one statement, where the answer is streamed.
 */
import { COPY_TO_STDOUT_REASON } from '../parser/statement-rules';
import type { ParsedStatement } from '../parser/types';

/** The COPY formats; each has its media type. */
export type CopyFormat = 'text' | 'csv' | 'binary';

/** What a COPY ... TO STDOUT answer is: its format, and the encoding its options name. */
export interface CopyOut {
  format: CopyFormat;
  /**
   * The ENCODING option's value, lower case, as written in the statement (quotes removed);
   * absent: the connection's (UTF-8).
   */
  encoding?: string;
}

/** The format and encoding of a COPY ... TO STDOUT. */
export function copyOutOf(statement: ParsedStatement): CopyOut {
  const encoding = copyEncodingOf(statement);
  return { format: copyFormatOf(statement), ...(encoding ? { encoding } : {}) };
}

/** Whether `statement` is a COPY ... TO STDOUT (as the lexer read it: literals cannot fool it). */
export function isCopyToStdout(statement: ParsedStatement): boolean {
  return statement.unsupported === COPY_TO_STDOUT_REASON;
}

/**
 * The format a COPY ... TO STDOUT writes: `FORMAT csv|binary|text` (the value quoted or not, also
 * as E'' or U&''), the older bare `CSV` and `BINARY` options, or `COPY BINARY table`. Quoted
 * values of other options (a NULL string, a delimiter) never count.
 */
export function copyFormatOf(statement: ParsedStatement): CopyFormat {
  const text = statement.text.toLowerCase();
  if (/^\s*copy\s+binary\b/.test(text)) return 'binary';
  const options = optionsOf(text);
  const named = /\bformat\s+(?:e|u&)?['"$]*(csv|binary|text)\b/.exec(options)?.[1];
  if (named) return named as CopyFormat;
  const bare = options.replace(/'(?:[^']|'')*'/g, "''");
  if (/\bcsv\b/.test(bare)) return 'csv';
  if (/\bbinary\b/.test(bare)) return 'binary';
  return 'text';
}

/**
 * The `ENCODING` a COPY ... TO STDOUT names, if any, as written (a string, quoted identifier or
 * bare word) without its quotes, escapes undecoded.
 */
export function copyEncodingOf(statement: ParsedStatement): string | undefined {
  const options = optionsOf(statement.text.toLowerCase());
  // The keyword outside quoted values (`NULL 'encoding x'` names none), followed by a value (a
  // column named encoding, `FORCE_QUOTE (encoding)`, is not the option).
  for (const keyword of maskQuoted(options).matchAll(/\bencoding\b/g)) {
    const value = ENCODING_VALUE.exec(options.slice(keyword.index + keyword[0].length));
    if (!value) continue;
    const [, single, double, , dollar, bare] = value;
    return single?.replaceAll("''", "'") ?? double?.replaceAll('""', '"') ?? dollar ?? bare;
  }
  return undefined;
}

/** An option's value: a string (E'', U&'' too), a quoted identifier, a dollar-quoted string, a word. */
const ENCODING_VALUE =
  /^\s+(?:(?:e|u&)?'((?:[^']|'')*)'|"((?:[^"]|"")*)"|\$([a-z_]*)\$([\s\S]*?)\$\3\$|([a-z_][a-z0-9_$]*))/;

/**
 * The text after the target STDOUT: the last STDOUT outside quoted strings (the query before it,
 * and option values after it, may say anything).
 */
function optionsOf(text: string): string {
  const target = maskQuoted(text).lastIndexOf('stdout');
  return target === -1 ? '' : text.slice(target + 'stdout'.length);
}

/** The text with every quoted string and identifier blanked out, at the same positions. */
function maskQuoted(text: string): string {
  return text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, (quoted) => ' '.repeat(quoted.length));
}
