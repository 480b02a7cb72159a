/**
 * The media type of a COPY ... TO STDOUT answer (docs/decisions.md 10.22): binary data is
 * `application/octet-stream`; text and CSV name their charset, which is UTF-8 (the connection's
 * client encoding) unless the COPY's ENCODING option names another. A charset is claimed only
 * under its registered name: PostgreSQL's names (`WIN1252`, `SJIS`) are not charsets a client
 * knows, and an encoding without a registered charset (`SQL_ASCII`, `MULE_INTERNAL`) gets none,
 * rather than a claim a client would decode wrongly.
 */
import type { CopyOut } from '@sqlgate/core';

/** Registered charsets (IANA) of PostgreSQL's encodings, by the encoding's name and aliases. */
const CHARSET_BY_ENCODING = new Map<string, string>([
  ...aliases('utf-8', 'utf8', 'unicode'),
  ...aliases('iso-8859-1', 'latin1', 'iso88591'),
  ...aliases('iso-8859-2', 'latin2', 'iso88592'),
  ...aliases('iso-8859-3', 'latin3', 'iso88593'),
  ...aliases('iso-8859-4', 'latin4', 'iso88594'),
  ...aliases('iso-8859-9', 'latin5', 'iso88599'),
  ...aliases('iso-8859-10', 'latin6', 'iso885910'),
  ...aliases('iso-8859-13', 'latin7', 'iso885913'),
  ...aliases('iso-8859-14', 'latin8', 'iso885914'),
  ...aliases('iso-8859-15', 'latin9', 'iso885915'),
  ...aliases('iso-8859-16', 'latin10', 'iso885916'),
  ...aliases('iso-8859-5', 'iso88595'),
  ...aliases('iso-8859-6', 'iso88596'),
  ...aliases('iso-8859-7', 'iso88597'),
  ...aliases('iso-8859-8', 'iso88598'),
  ...[1250, 1252, 1253, 1254, 1255, 1256, 1257].flatMap((page) =>
    aliases(`windows-${page}`, `win${page}`, `windows${page}`),
  ),
  ...aliases('windows-1251', 'win1251', 'windows1251', 'win'),
  ...aliases('windows-1258', 'win1258', 'windows1258', 'abc', 'tcvn', 'tcvn5712', 'vscii'),
  ...aliases('windows-874', 'win874', 'windows874'),
  ...aliases('ibm866', 'win866', 'windows866', 'alt'),
  ...aliases('koi8-r', 'koi8r', 'koi8'),
  ...aliases('koi8-u', 'koi8u'),
  ...aliases('euc-jp', 'eucjp'),
  ...aliases('euc-kr', 'euckr'),
  ...aliases('gb2312', 'euccn'),
  ...aliases('shift_jis', 'sjis', 'shiftjis', 'mskanji', 'win932', 'windows932'),
  ...aliases('big5', 'big5', 'win950', 'windows950'),
  ...aliases('gbk', 'gbk', 'win936', 'windows936'),
  ...aliases('gb18030', 'gb18030'),
]);

function aliases(charset: string, ...names: string[]): [string, string][] {
  return names.map((name) => [name, charset]);
}

/**
 * The registered charset of a PostgreSQL encoding name, if it has one. PostgreSQL reads a name
 * without case and without its other characters than letters and digits (`ISO-8859-1` is
 * `iso88591`, LATIN1).
 */
function charsetOf(encoding: string): string | undefined {
  return CHARSET_BY_ENCODING.get(encoding.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/** The Content-Type of a COPY ... TO STDOUT answer. */
export function copyContentType({ format, encoding }: CopyOut): string {
  if (format === 'binary') return 'application/octet-stream';
  const type = format === 'csv' ? 'text/csv' : 'text/plain';
  const charset = encoding === undefined ? 'utf-8' : charsetOf(encoding);
  return charset === undefined ? type : `${type}; charset=${charset}`;
}
