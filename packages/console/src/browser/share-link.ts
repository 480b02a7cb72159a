/**
 * Links that open the console with some SQL in its editor: `#sql=<base64url of its UTF-8>` after
 * the page's address. The SQL rides in the fragment, which browsers never send to a server, and it
 * is all a link carries: no connection, credentials or token, and the address's own user and
 * password, if it had any, are dropped. Opening a link fills the editor and runs nothing. Pure.
 */
const SQL_PARAMETER = 'sql';

/** SQL longer than this makes a link too long to paste around; saving or exporting suits it. */
export const MAX_LINK_SQL_LENGTH = 100_000;

export function encodeSql(sql: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(sql)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The SQL of a base64url text, or undefined when it is not base64 of UTF-8. Links are made in
 * base64url without padding, but standard base64 (`+`, `/`, `=` padding), as other tools write
 * it, is read too.
 */
export function decodeSql(text: string): string | undefined {
  if (!/^[A-Za-z0-9_+/-]*={0,2}$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(binary, (character) => character.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The link to `pageAddress` (the console's own) that opens `sql`, or why there is none. */
export function shareLink(
  pageAddress: string,
  sql: string,
): { link: string } | { refused: string } {
  if (sql.trim() === '') return { refused: 'The editor is empty: there is nothing to link to' };
  if (sql.length > MAX_LINK_SQL_LENGTH) {
    return {
      refused: `Links carry at most ${MAX_LINK_SQL_LENGTH.toLocaleString('en')} characters of SQL: save the query and export it instead`,
    };
  }
  const url = new URL(pageAddress);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = `${SQL_PARAMETER}=${encodeSql(sql)}`;
  return { link: url.href };
}

/**
 * What a fragment (`location.hash`) asks for: the SQL of a link, an error for a link whose SQL
 * cannot be read, or undefined when it is not such a link.
 */
export function sqlOfFragment(hash: string): { sql: string } | { error: string } | undefined {
  const parameters = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  // URLSearchParams reads a `+` as a space: standard base64's `+` comes back as itself.
  const encoded = parameters.get(SQL_PARAMETER)?.replace(/ /g, '+');
  if (encoded === undefined) return undefined;
  const sql = decodeSql(encoded);
  return sql === undefined
    ? { error: 'The link’s SQL could not be read: it was cut or changed' }
    : { sql };
}
