/**
 * What the parser tells the rest of sqlgate about each statement of a submitted SQL text.
 * docs/decisions.md section 1 (and 10.9-10.11) is the specification.
 */

/** Exactly one class per statement; it decides the execution strategy. */
export type StatementClass =
  'read' | 'write' | 'transaction-control' | 'no-transaction' | 'session';

/**
 * A place in the submitted text: `offset` a UTF-16 index, line and column 1-based, columns
 * counted in characters as PostgreSQL does.
 */
export interface SourcePosition {
  offset: number;
  line: number;
  column: number;
}

/**
 * Relations a statement reads and writes, as PostgreSQL would name them. `null`: unknown, so the
 * cache treats the statement as touching every relation of its target.
 */
export interface StatementRelations {
  reads: string[] | null;
  writes: string[] | null;
}

export interface ParsedStatement {
  /** 0-based position of the statement among the non-empty statements of the text. */
  index: number;
  /**
   * Normalised text: comments removed, whitespace outside literals collapsed to one space, trimmed;
   * no trailing `;`. Responses show it as `statement`; it is never what runs.
   */
  text: string;
  /**
   * The text to execute, exactly as submitted (docs/decisions.md 10.9): from the statement's first
   * token (or a block comment before it, such as an optimizer hint) to the end of its last token,
   * comments inside kept, no trailing `;`.
   */
  sql: string;
  /** The submitted text ended this statement with `;`. */
  terminated: boolean;
  /** Start of the first token in the submitted text. */
  start: SourcePosition;
  /** UTF-16 offset just past the last token in the submitted text. */
  end: number;
  /** First keyword, upper-cased (`SELECT`, `WITH`, `EXPLAIN`...). */
  keyword: string;
  statementClass: StatementClass;
  /** Computed on first read (it may need the syntax tree); an own enumerable property all the same. */
  relations: StatementRelations;
  /**
   * The statement changes state of the connection that outlives it (SET, PREPARE, LISTEN, temp tables,
   * set_config(), advisory locks, transaction control...), so the connection must be cleaned before reuse.
   */
  changesSession: boolean;
  /**
   * The statement calls a volatile function or reads the clock otherwise (docs/decisions.md 10.36):
   * its result must not be cached.
   */
  callsVolatileFunction: boolean;
  /**
   * A parameter is cast to a type that may read the clock (`$1::timestamptz`): its value decides
   * whether the result may be cached (docs/decisions.md 10.36).
   */
  castsParameterToClockType: boolean;
  /** Set when the statement cannot be served over HTTP (COPY ... FROM STDIN / TO STDOUT): the reason. */
  unsupported: string | null;
  /**
   * Maps a 1-based character position within `sql` (PostgreSQL's error `position`, which counts
   * characters, not UTF-16 units) to the matching place in the submitted text.
   */
  locate(position: number): SourcePosition;
}
