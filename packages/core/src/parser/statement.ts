import type { Classification } from './classify';
import type { StatementSpan } from './splitter';
import type { ParsedStatement, SourcePosition, StatementClass, StatementRelations } from './types';

/** What a statement is made of: its span of the text, what it runs, and how it was classified. */
export interface StatementParts {
  span: StatementSpan;
  /** The text sent to the server: the span's text without the comments before it. */
  sql: string;
  index: number;
  start: SourcePosition;
  classification: Classification;
  /** `ParsedStatement.locate`. */
  locate: (position: number) => SourcePosition;
}

/**
 * A parsed statement. `relations` is an own, enumerable property computed on first read by an
 * accessor shared by all statements (a getter per object measurably slowed parsing).
 */
export class Statement implements ParsedStatement {
  index: number;
  text: string;
  sql: string;
  terminated: boolean;
  start: SourcePosition;
  end: number;
  keyword: string;
  statementClass: StatementClass;
  declare relations: StatementRelations;
  changesSession: boolean;
  callsVolatileFunction: boolean;
  castsParameterToClockType: boolean;
  unsupported: string | null;
  locate: (position: number) => SourcePosition;
  #computeRelations: () => StatementRelations;
  #relations: StatementRelations | undefined = undefined;

  static readonly #relationsProperty: PropertyDescriptor = {
    enumerable: true,
    configurable: true,
    get(this: Statement): StatementRelations {
      return (this.#relations ??= this.#computeRelations());
    },
    set(this: Statement, value: StatementRelations): void {
      this.#relations = value;
    },
  };

  constructor(parts: StatementParts) {
    const { span, sql, index, start, classification, locate } = parts;
    this.index = index;
    this.text = span.text;
    this.sql = sql;
    this.terminated = span.terminated;
    this.start = start;
    this.end = span.end;
    this.keyword = classification.keyword;
    this.statementClass = classification.statementClass;
    Object.defineProperty(this, 'relations', Statement.#relationsProperty);
    this.changesSession = classification.changesSession;
    this.callsVolatileFunction = classification.callsVolatileFunction;
    this.castsParameterToClockType = classification.castsParameterToClockType;
    this.unsupported = classification.unsupported;
    this.locate = locate;
    this.#computeRelations = classification.relations;
  }
}
