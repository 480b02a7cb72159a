/**
 * The bookkeeping of one connection's named prepared statements, for reads (docs/decisions.md
 * 10.30): a text sent again goes out as Bind(name) without Parse. A name is a hash of what the
 * statement is, so a backend shared by a pooler that holds it holds the same statement. A name is
 * recorded once its round trip succeeded; evicted and possibly-created names are closed in front
 * of the next round trip (a Close of a missing name is no error).
 */
import { createHash } from 'node:crypto';

/** Statements kept per connection: each costs the backend a few KiB of parse tree and plan. */
export const MAX_PREPARED_STATEMENTS = 100;

/** Longer texts (UTF-16 units) are never named: rarely repeated, and cheap to parse beside a run. */
export const MAX_PREPARED_TEXT_LENGTH = 8 * 1024;

/** The count of parameter types sqlgate's Parse messages declare: none, PostgreSQL infers them. */
const NO_PARAMETER_TYPES = Buffer.alloc(4);

/**
 * The name of `text`'s statement: `sqlgate_` and the base64url SHA-256 (51 bytes, within 63) of
 * its Parse's parameter types (their count: 0) and its UTF-8 text (docs/decisions.md 10.30).
 */
export function statementName(text: string): string {
  const digest = createHash('sha256')
    .update(NO_PARAMETER_TYPES)
    .update(text, 'utf8')
    .digest('base64url');
  return `sqlgate_${digest}`;
}

/** How one statement of a round trip goes out. */
export interface NamedStatement {
  name: string;
  /** Sent with Parse(name): not yet prepared on this connection, or prepared anew. */
  parse: boolean;
  /** Sent with Close(name) before its Parse: the backend may hold it already, or stale. */
  renew?: boolean;
  /** The cached Bind + Describe + Execute bytes of a text without parameters, when known. */
  entry?: PreparedEntry;
}

/** A statement prepared on the connection. */
export interface PreparedEntry {
  readonly name: string;
  /** Bind + Describe + Execute of this statement without parameters, for one row count. */
  executeBytes?: { rows: number; bytes: Buffer };
}

export class PreparedStatements {
  /** Prepared texts, least recently used first (Map order). */
  private readonly entries = new Map<string, PreparedEntry>();
  /** Names to close with the next round trip. */
  private closes: string[] = [];

  /**
   * How each text of a round trip goes out: named (Parse when new) or unnamed (undefined). With
   * `renew`, every name is closed and parsed again: the round trip is sent again after one failed.
   */
  plan(texts: readonly string[], renew = false): (NamedStatement | undefined)[] {
    // A lone text cannot repeat within its round trip: no map for the common case.
    const planned = texts.length > 1 ? new Map<string, NamedStatement>() : undefined;
    let created = 0;
    return texts.map((text) => {
      const earlier = planned?.get(text);
      if (earlier) return { name: earlier.name, parse: false };
      if (text.length > MAX_PREPARED_TEXT_LENGTH) return undefined;
      const entry = this.entries.get(text);
      let statement: NamedStatement;
      if (entry) {
        this.entries.delete(text);
        this.entries.set(text, entry);
        statement = renew
          ? { name: entry.name, parse: true, renew, entry }
          : { name: entry.name, parse: false, entry };
      } else {
        // One round trip never names more statements than the cache may hold.
        if (created >= MAX_PREPARED_STATEMENTS) return undefined;
        created++;
        statement = { name: statementName(text), parse: true, renew };
      }
      planned?.set(text, statement);
      return statement;
    });
  }

  /** The round trip succeeded: its parsed texts are prepared; past the bound LRU ones are closed. */
  confirm(texts: readonly string[], plan: readonly (NamedStatement | undefined)[]): void {
    plan.forEach((statement, index) => {
      if (!statement?.parse || statement.entry) return;
      const entry: PreparedEntry = { name: statement.name };
      statement.entry = entry;
      this.entries.set(texts[index] as string, entry);
    });
    for (const [text, entry] of this.entries) {
      if (this.entries.size <= MAX_PREPARED_STATEMENTS) break;
      this.entries.delete(text);
      this.closes.push(entry.name);
    }
  }

  /** The round trip failed: names it may have created are closed with the next one. */
  abandon(names: readonly string[]): void {
    this.closes.push(...names);
  }

  /**
   * Statements may have been dropped (DISCARD, DEALLOCATE): all is forgotten and nothing closed,
   * which could fail a caller's DEALLOCATE.
   */
  forgetAll(): void {
    this.entries.clear();
    this.closes = [];
  }

  /** The names to close, taken: the caller puts their Close messages in front of its round trip. */
  takeCloses(): string[] {
    if (this.closes.length === 0) return NO_NAMES;
    const names = this.closes;
    this.closes = [];
    return names;
  }
}

const NO_NAMES: string[] = [];

/**
 * Whether a text starts with DISCARD or DEALLOCATE (after whitespace and comments), either of
 * which can drop prepared statements. Conservative: DISCARD PLANS drops none, but is caught too.
 */
export function mayDropPreparedStatements(text: string): boolean {
  const start = firstTokenStart(text);
  return DROPPING_KEYWORD.test(text.slice(start, start + 11));
}

const DROPPING_KEYWORD = /^(?:discard|deallocate)(?![A-Za-z0-9_$\u0080-\uffff])/i;

/** Where the first token of `text` begins: past whitespace, `--` comments and nested block comments. */
function firstTokenStart(text: string): number {
  let at = 0;
  while (at < text.length) {
    const char = text.charCodeAt(at);
    // Space, \t, \n, \r, \f: PostgreSQL's whitespace (docs/decisions.md 10.11).
    if (char === 0x20 || char === 0x09 || char === 0x0a || char === 0x0d || char === 0x0c) {
      at++;
    } else if (text.startsWith('--', at)) {
      const end = text.indexOf('\n', at);
      if (end < 0) return text.length;
      at = end + 1;
    } else if (text.startsWith('/*', at)) {
      let depth = 1;
      at += 2;
      while (at < text.length && depth > 0) {
        if (text.startsWith('/*', at)) {
          depth++;
          at += 2;
        } else if (text.startsWith('*/', at)) {
          depth--;
          at += 2;
        } else at++;
      }
    } else return at;
  }
  return at;
}
