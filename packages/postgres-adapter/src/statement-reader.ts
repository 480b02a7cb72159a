/**
 * What one statement sent back: its columns, at most `maxRows` rows parsed with the pool's type
 * rules, its command tag, and when it finished.
 */
import type { FieldDescription, RowMode, StatementResult } from '@sqlgate/core';
import type { TypeRegistry } from './types/type-registry';
import type { ValueParser } from './types/value-parsers';

export interface WireField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: 'text' | 'binary' | number;
}

const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

export class StatementReader {
  private fields: FieldDescription[] = [];
  private names: string[] = [];
  private parsers: ValueParser[] = [];
  /** A column is named `__proto__`: plain objects would turn it into a prototype. */
  private namesNeedNullPrototype = false;
  private readonly rows: unknown[] = [];
  private truncated = false;
  private command: string | null = null;
  private rowCount: number | null = null;

  constructor(
    private readonly types: TypeRegistry,
    private readonly rowMode: RowMode,
    private readonly maxRows: number,
  ) {}

  describe(wireFields: WireField[]): void {
    this.fields = wireFields.map((field) => ({
      name: field.name,
      dataTypeID: field.dataTypeID,
      dataTypeName: this.types.nameOf(field.dataTypeID) ?? String(field.dataTypeID),
      tableID: field.tableID,
      columnID: field.columnID,
      dataTypeSize: field.dataTypeSize,
      dataTypeModifier: field.dataTypeModifier,
      format: field.format === 'binary' || field.format === 1 ? 'binary' : 'text',
    }));
    this.names = this.fields.map((field) => field.name);
    this.namesNeedNullPrototype = this.names.includes('__proto__');
    this.parsers = this.fields.map((field) => this.types.parserFor(field.dataTypeID));
  }

  /** Keeps the row while under the limit; the one past it only says the result was truncated. */
  row(values: (string | null)[]): void {
    if (this.rows.length >= this.maxRows) {
      this.truncated = true;
      return;
    }
    this.rows.push(this.parseRow(values));
  }

  suspended(): void {
    this.truncated = true;
  }

  complete(tag: string): void {
    const match = COMMAND_TAG.exec(tag);
    if (!match) return;
    this.command = match[1] ?? null;
    const count = match[3] ?? match[2];
    this.rowCount = count === undefined ? null : Number(count);
  }

  /** Field names for custom types learned after the rows were read. */
  refreshTypeNames(): void {
    for (const field of this.fields) {
      field.dataTypeName = this.types.nameOf(field.dataTypeID) ?? field.dataTypeName;
    }
  }

  result(durationMs: number): StatementResult {
    return {
      command: this.command,
      rowCount: this.rowCount ?? (this.fields.length > 0 ? this.rows.length : null),
      fields: this.fields,
      rows: this.rows,
      truncated: this.truncated,
      durationMs,
    };
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
