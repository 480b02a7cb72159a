/**
 * WAL positions (PostgreSQL's pg_lsn, `16/B374D848`) as numbers that compare, and the consistency
 * token a write's answer carries: its position, opaque to callers (docs/decisions.md 13).
 */

/** The position `text` names (`X/Y`, hexadecimal), or undefined when it names none. */
export function walPositionOf(text: string): bigint | undefined {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The token of a write that committed at or before `lsn` (pg_lsn text). */
export function consistencyTokenOf(lsn: string): string {
  return Buffer.from(lsn, 'latin1').toString('base64url');
}

/** The position a token names; undefined for a token sqlgate did not make. */
export function walPositionOfToken(token: string): bigint | undefined {
  if (token.length === 0 || token.length > 24 || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  return walPositionOf(Buffer.from(token, 'base64url').toString('latin1'));
}
