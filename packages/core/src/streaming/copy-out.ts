/**
 * COPY ... TO STDOUT as a streamed answer (docs/decisions.md 10.22): the server's COPY data is the
 * response body. It runs only as the one statement of its request, and only where the answer is
 * streamed; everywhere else it is refused as before.
 */
import { COPY_TO_STDOUT_REASON } from '../parser/statement-rules';
import type { ParsedStatement } from '../parser/types';

/** The COPY formats; each has its media type. */
export type CopyFormat = 'text' | 'csv' | 'binary';

/** Whether `statement` is a COPY ... TO STDOUT (as the lexer read it: literals cannot fool it). */
export function isCopyToStdout(statement: ParsedStatement): boolean {
  return statement.unsupported === COPY_TO_STDOUT_REASON;
}

/**
 * The format a COPY ... TO STDOUT writes: `FORMAT csv|binary|text`, or the older bare `CSV` and
 * `BINARY`, in the options after STDOUT (quoted option values such as a NULL string are ignored).
 */
export function copyFormatOf(statement: ParsedStatement): CopyFormat {
  const text = statement.text.replace(/'(?:[^']|'')*'/g, "''").toLowerCase();
  // The last TO STDOUT: the query before it may say anything.
  const options = text.slice(text.lastIndexOf('stdout') + 'stdout'.length);
  const named = /\bformat\s+(csv|binary|text)\b/.exec(options)?.[1];
  if (named) return named as CopyFormat;
  if (/\bcsv\b/.test(options)) return 'csv';
  if (/\bbinary\b/.test(options)) return 'binary';
  return 'text';
}
