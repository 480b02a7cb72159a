/**
 * What one statement sent back: columns, rows kept within `maxRows` and the byte budget, the
 * command tag and its time. Rows past a limit are counted and dropped unparsed.
 */
import type {
  FieldDescription,
  ResultBudget,
  RowMode,
  RowSink,
  StatementResult,
} from '@sqlgate/core';
import type { WireField } from './backend-messages';
import { ProtocolViolation, type MessageFraming } from './message-framing';
import type { TypeRegistry } from './types/type-registry';
import { asText, type ValueParser } from './types/value-parsers';

const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

/** What a StatementReader reads with. */
export interface StatementReading {
  types: TypeRegistry;
  rowMode: RowMode;
  maxRows: number;
  framing: MessageFraming;
  /** The request's budget; undefined for streamed rows, which are not kept. */
  budget: ResultBudget | undefined;
  stream?: StreamedRows | undefined;
  /** Values as PostgreSQL's text, unparsed (a CSV or a Neon-compatible answer). */
  textValues?: boolean;
}

/** Where a streamed statement's rows go, and how to hold the server while the consumer is full. */
export interface StreamedRows {
  sink: RowSink;
  /** The statement's place in the round trip's list. */
  position: number;
  /** Stops reading from the server until the sink has drained. */
  pause(): void;
  /** A larger row is dropped unread (and the statement truncated by bytes). */
  maxRowBytes?: number;
}

export class StatementReader {
  private fields: FieldDescription[] = [];
  private names: string[] = [];
  private parsers: ValueParser[] = [];
  /** A column is named `__proto__`: plain objects would turn it into a prototype. */
  private namesNeedNullPrototype = false;
  /** What the column names add to each row's size in the response. */
  private nameBytes = 0;
  private readonly rows: unknown[] = [];
  private truncatedBy: 'rows' | 'bytes' | undefined;
  private suspendedByServer = false;
  private command: string | null = null;
  private rowCount: number | null = null;
  /** Rows handed to the stream (they are not kept). */
  private streamedRows = 0;
  /** Bytes this statement took from the request's budget. */
  private charged = 0;
  /**
   * What the stream's sink admitted for each row the framing let through and this reader has not
   * seen yet, oldest first: the framing reads ahead of pg, which hands rows over in order.
   */
  private admitted: number[] = [];
  /** From the statement's ParameterDescription, when it was described with its parameters. */
  private parameterTypes: readonly number[] | undefined;

  private readonly types: TypeRegistry;
  private readonly rowMode: RowMode;
  private readonly maxRows: number;
  private readonly framing: MessageFraming;
  private readonly budget: ResultBudget | undefined;
  private readonly stream: StreamedRows | undefined;
  private readonly textValues: boolean;

  constructor(reading: StatementReading) {
    this.types = reading.types;
    this.rowMode = reading.rowMode;
    this.maxRows = reading.maxRows;
    this.framing = reading.framing;
    this.budget = reading.budget;
    this.stream = reading.stream;
    this.textValues = reading.textValues === true;
  }

  /** This statement's rows begin: they are kept again, within the budget. */
  private begin(): void {
    this.framing.dropDataRows = false;
    this.framing.maxRowBytes =
      this.budget?.remainingBytes ?? this.stream?.maxRowBytes ?? Number.MAX_SAFE_INTEGER;
    this.admitted = [];
    this.framing.admitRow = this.stream?.sink.admit ? this.admitRow : null;
  }

  /**
   * Before the framing reads a streamed row: the sink takes its bytes, or refuses it, and then the
   * statement is cut there (the framing drops the rest, which result() reports as bytes).
   */
  private readonly admitRow = (bytes: number): boolean => {
    if (this.stream?.sink.admit?.(bytes)) {
      this.admitted.push(bytes);
      return true;
    }
    this.framing.dropDataRows = true;
    return false;
  };

  /** The types PostgreSQL gave the statement's parameters (OIDs), for the result cache. */
  describeParameters(types: readonly number[]): void {
    this.parameterTypes = types;
  }

  describe(wireFields: WireField[]): void {
    this.begin();
    this.fields = wireFields.map((field) => ({
      name: field.name,
      dataTypeID: field.dataTypeID,
      dataTypeName: this.types.nameOf(field.dataTypeID) ?? String(field.dataTypeID),
      tableID: field.tableID,
      columnID: field.columnID,
      dataTypeSize: field.dataTypeSize,
      dataTypeModifier: field.dataTypeModifier,
      format: field.format,
    }));
    this.names = this.fields.map((field) => field.name);
    this.namesNeedNullPrototype = this.names.includes('__proto__');
    // In object mode every row repeats the column names in the response.
    this.nameBytes =
      this.rowMode === 'object' ? this.names.reduce((sum, name) => sum + name.length + 4, 0) : 0;
    this.parsers = this.fields.map((field) =>
      this.textValues ? asText : this.types.parserFor(field.dataTypeID),
    );
    this.stream?.sink.describe(this.stream.position, this.fields);
  }

  /** Keeps the row while within the limits; past them, the rest of the statement's rows are dropped. */
  row(values: (string | null)[]): void {
    if (values.length !== this.fields.length) {
      throw new ProtocolViolation(
        `The server sent a row of ${values.length} values for ${this.fields.length} columns`,
      );
    }
    // A row the reader drops after its sink admitted it is given back when the stream ends.
    const admittedBytes = this.admitted.length > 0 ? this.admitted.shift() : undefined;
    if (this.truncatedBy) return;
    if (this.rows.length + this.streamedRows >= this.maxRows) {
      this.stopKeeping('rows');
      return;
    }
    if (this.stream) {
      this.streamedRows++;
      const row = this.parseRow(values);
      const bytes = admittedBytes ?? rowBytes(values);
      if (!this.stream.sink.row(this.stream.position, row, bytes)) this.stream.pause();
      return;
    }
    if (this.budget) {
      const bytes = rowBytes(values) + this.nameBytes;
      if (bytes > this.budget.remainingBytes) {
        this.charged += this.budget.remainingBytes;
        this.budget.remainingBytes = 0;
        this.stopKeeping('bytes');
        return;
      }
      this.budget.remainingBytes -= bytes;
      this.charged += bytes;
      this.framing.maxRowBytes = this.budget.remainingBytes;
    }
    this.rows.push(this.parseRow(values));
  }

  suspended(): void {
    this.suspendedByServer = true;
  }

  complete(tag: string): void {
    const match = COMMAND_TAG.exec(tag);
    if (!match) return;
    this.command = match[1] ?? null;
    const count = match[3] ?? match[2];
    this.rowCount = count === undefined ? null : Number(count);
  }

  /**
   * What this statement took from the budget, once: its round trip is sent again and these rows
   * are not returned (docs/decisions.md 10.30).
   */
  takeCharged(): number {
    const charged = this.charged;
    this.charged = 0;
    return charged;
  }

  /** Field names for custom types learned after the rows were read. */
  refreshTypeNames(): void {
    for (const field of this.fields) {
      field.dataTypeName = this.types.nameOf(field.dataTypeID) ?? field.dataTypeName;
    }
  }

  /** `droppedRows`: rows of this statement the framing dropped unread. */
  result(durationMs: number, droppedRows: number): StatementResult {
    // A row too large for the remaining budget never reached the reader: the framing dropped it.
    if (!this.truncatedBy && droppedRows > 0) {
      this.truncatedBy = 'bytes';
    }
    this.framing.dropDataRows = false;
    if (!this.truncatedBy && this.suspendedByServer) this.truncatedBy = 'rows';
    return {
      command: this.command,
      // A tag without a count (SHOW, EXPLAIN) still returned every row. A suspended statement has
      // no tag: how many rows it would have produced is unknown (docs/decisions.md 10.42).
      rowCount:
        this.rowCount ??
        (this.fields.length > 0 && !this.suspendedByServer
          ? this.rows.length + this.streamedRows
          : null),
      fields: this.fields,
      rows: this.rows,
      truncated: this.truncatedBy !== undefined,
      ...(this.truncatedBy ? { truncatedBy: this.truncatedBy } : {}),
      durationMs,
      ...(this.parameterTypes ? { parameterTypes: this.parameterTypes } : {}),
    };
  }

  private stopKeeping(limit: 'rows' | 'bytes'): void {
    this.truncatedBy = limit;
    this.framing.dropDataRows = true;
  }

  private parseRow(values: (string | null)[]): unknown {
    const { parsers, names } = this;
    if (this.rowMode === 'array') {
      const row = new Array<unknown>(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[i] = value === null || value === undefined ? null : (parsers[i] as ValueParser)(value);
      }
      return row;
    }
    // Plain objects built in one key order share a hidden class: smaller and faster to serialise
    // than objects without a prototype, which V8 keeps as dictionaries. Only a column named
    // __proto__ needs one without a prototype, to stay data.
    const row: Record<string, unknown> = this.namesNeedNullPrototype ? Object.create(null) : {};
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      row[names[i] as string] =
        value === null || value === undefined ? null : (parsers[i] as ValueParser)(value);
    }
    return row;
  }
}

/** What a row costs the byte budget: its values' lengths plus a little per value (docs/decisions.md 10.2). */
function rowBytes(values: (string | null)[]): number {
  let bytes = 0;
  for (let i = 0; i < values.length; i++) bytes += (values[i]?.length ?? 0) + 8;
  return bytes;
}
