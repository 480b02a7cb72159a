/**
 * Named prepared statements of one connection, for reads (docs/decisions.md 10.30). A text sent
 * again on the same connection skips PostgreSQL's parse, analysis and planning: it goes out as
 * Bind(name) instead of Parse + Bind.
 *
 * A name never stands for two statements: it is a hash of everything that decides what the
 * statement is (its text and the parameter types of its Parse), the same in every connection and
 * every process. A backend that PgBouncer in transaction mode shares among client connections, or
 * among several sqlgate processes, may therefore hold a name another client connection prepared:
 * it is the same statement.
 *
 * This class keeps the bookkeeping only; bounded-query.ts decides what is sent and pg-connection.ts
 * what happens when the server does not hold what this believes it holds (a pooler moved the
 * connection to another backend, a function ran DEALLOCATE): the server answers 26000 or 42P05 and
 * the round trip is sent again with its statements prepared anew.
 *
 * - A name is recorded only once its round trip ended without an error. The names a failed round
 *   trip parsed up to its failure may exist, and are closed with the next round trip.
 * - The cache is bounded (MAX_PREPARED_STATEMENTS, least recently used out). An evicted name is
 *   closed by a Close message put in front of the connection's next round trip: no round trip of
 *   its own, and a Close of a name that does not exist is no error.
 */
import { createHash } from 'node:crypto';

/**
 * Statements kept per connection. Each costs the backend its parse tree and plan (a few KiB for a
 * simple read): 100 per connection, with POOL_MAX connections per pool, stays far below what a
 * backend holds anyway, and covers the handful of texts a dashboard or service repeats.
 */
export const MAX_PREPARED_STATEMENTS = 100;

/**
 * Longer texts are never named (UTF-16 units, about bytes for SQL): a long text is rarely sent
 * twice word for word, and its parse is small beside what it runs.
 */
export const MAX_PREPARED_TEXT_LENGTH = 8 * 1024;

/** The parameter types sqlgate's Parse messages declare: none, PostgreSQL infers them. */
export const PARSE_PARAMETER_TYPES: readonly number[] = [];

/**
 * The name of the statement that `text` with `parameterTypes` makes: `sqlgate_` and the SHA-256
 * of both, base64url (51 bytes, within PostgreSQL's 63). The text is hashed as the UTF-8 that
 * Parse sends, the types ahead of it with their count, so that no two inputs run together. A
 * caller's own PREPARE could take such a name only by writing it out: sqlgate then prepares its
 * statement anew in its place (docs/decisions.md 10.30).
 */
export function statementName(
  text: string,
  parameterTypes: readonly number[] = PARSE_PARAMETER_TYPES,
): string {
  const types = Buffer.alloc(4 * (parameterTypes.length + 1));
  types.writeUInt32BE(parameterTypes.length, 0);
  parameterTypes.forEach((oid, index) => types.writeUInt32BE(oid, 4 * (index + 1)));
  const digest = createHash('sha256').update(types).update(text, 'utf8').digest('base64url');
  return `sqlgate_${digest}`;
}

/** How one statement of a round trip goes out. */
export interface NamedStatement {
  name: string;
  /** Sent with Parse(name): not yet prepared on this connection, or prepared anew. */
  parse: boolean;
  /**
   * Sent with Close(name) before its Parse: the backend may hold the name already (a pooler's
   * backend, prepared by another client connection) or hold it stale, and the round trip must not
   * fail for it again.
   */
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
   * How each text of a round trip goes out: named (Parse when new), or undefined for the unnamed
   * statement (too long, or past the bound for one round trip). A text repeated within the round
   * trip is parsed once. Texts found are marked as used now. With `renew`, every named statement
   * is closed and parsed again, so that no name of the round trip can fail it: the round trip is
   * sent again after one did (docs/decisions.md 10.30).
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

  /**
   * The round trip ended without an error: the texts it parsed are prepared. Past the bound the
   * least recently used are forgotten and closed with the next round trip.
   */
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
   * The server dropped every statement, or a caller's statement may have (DISCARD, DEALLOCATE):
   * everything is forgotten, and nothing is closed, since closing a name a caller's DEALLOCATE
   * names would fail that DEALLOCATE.
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
