/**
 * One statement in one round trip, reading at most `maxRows` rows.
 *
 * It sends Parse, Bind, Describe, Execute(maxRows + 1) and Sync together. The server stops after
 * maxRows + 1 rows (PortalSuspended) and closes the portal at Sync, so an unbounded SELECT costs
 * neither the server nor this process more than the limit, and the extra row tells us the result was
 * truncated. pg-cursor reads the same way but needs a second round trip to close the portal; this
 * keeps the common case as fast as a plain query.
 */
import type { FieldDescription, RowMode, RunOptions, StatementResult } from '@sqlgate/core';
import type { TypeRegistry } from './types/type-registry';
import type { ValueParser } from './types/value-parsers';

// pg's own conversion of JavaScript values to parameters (arrays, Dates, Buffers, JSON objects).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** The part of pg's protocol connection a submittable drives. */
export interface ProtocolConnection {
  stream: { cork?: () => void; uncork?: () => void };
  parse(message: { text: string; name: string; types: number[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P' | 'S'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
  once?(event: string, listener: () => void): void;
  off?(event: string, listener: () => void): void;
}

interface WireField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: 'text' | 'binary' | number;
}

const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

export class BoundedQuery {
  readonly done: Promise<StatementResult>;
  private resolve!: (result: StatementResult) => void;
  private reject!: (error: unknown) => void;
  private fields: FieldDescription[] = [];
  private names: string[] = [];
  private parsers: ValueParser[] = [];
  private readonly rows: unknown[] = [];
  private truncated = false;
  private command: string | null = null;
  private rowCount: number | null = null;
  private failure: unknown;

  constructor(
    private readonly text: string,
    private readonly options: RunOptions,
    private readonly types: TypeRegistry,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: ProtocolConnection): Error | null {
    const { params = [] } = this.options;
    // Corked, the five messages leave in one packet.
    connection.stream.cork?.();
    try {
      connection.parse({ text: this.text, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: params as unknown[], valueMapper: prepareValue });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: this.options.maxRows + 1 });
      connection.sync();
    } catch (error) {
      // A parameter pg cannot convert: nothing was sent that needs an answer but the Sync.
      connection.sync();
      this.failure = error;
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: WireField[] }): void {
    this.fields = message.fields.map((field) => ({
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
    this.parsers = this.fields.map((field) => this.types.parserFor(field.dataTypeID));
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.rows.length >= this.options.maxRows) {
      this.truncated = true;
      return;
    }
    try {
      this.rows.push(this.parseRow(message.fields, this.options.rowMode));
    } catch (error) {
      this.failure ??= error;
    }
  }

  handlePortalSuspended(): void {
    this.truncated = true;
  }

  handleCommandComplete(message: { text: string }): void {
    const match = COMMAND_TAG.exec(message.text);
    if (!match) return;
    this.command = match[1] ?? null;
    const count = match[3] ?? match[2];
    this.rowCount = count === undefined ? null : Number(count);
  }

  handleEmptyQuery(): void {}

  handleCopyInResponse(connection: ProtocolConnection): void {
    connection.sendCopyFail('COPY FROM STDIN is not supported over HTTP');
  }

  handleCopyData(): void {}

  /**
   * pg calls this for an ErrorResponse and for broken connections. After an ErrorResponse the
   * server still sends ReadyForQuery with the new transaction status: settle only then, so the
   * caller sees the status the error left (a failed transaction), not the one before it.
   */
  handleError(error: unknown, connection?: ProtocolConnection): void {
    const isServerError = typeof (error as { severity?: unknown }).severity === 'string';
    if (!isServerError || !connection?.once) {
      this.reject(error);
      return;
    }
    const settle = (): void => {
      connection.off?.('readyForQuery', settle);
      connection.off?.('end', settle);
      this.reject(error);
    };
    connection.once('readyForQuery', settle);
    connection.once('end', settle);
  }

  handleReadyForQuery(): void {
    if (this.failure !== undefined) {
      this.reject(this.failure);
      return;
    }
    this.resolve({
      command: this.command,
      rowCount: this.rowCount ?? (this.fields.length > 0 ? this.rows.length : null),
      fields: this.fields,
      rows: this.rows,
      truncated: this.truncated,
    });
  }

  /** Re-reads the rows once custom types are known (arrays of enums, composites...). */
  refreshTypes(): void {
    for (const field of this.fields) field.dataTypeName = this.types.nameOf(field.dataTypeID) ?? field.dataTypeName;
  }

  private parseRow(values: (string | null)[], rowMode: RowMode): unknown {
    const { parsers, names } = this;
    if (rowMode === 'array') {
      const row = new Array<unknown>(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[i] = value === null || value === undefined ? null : (parsers[i] as ValueParser)(value);
      }
      return row;
    }
    // No prototype: a column named __proto__ is kept as data.
    const row: Record<string, unknown> = Object.create(null);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      row[names[i] as string] = value === null || value === undefined ? null : (parsers[i] as ValueParser)(value);
    }
    return row;
  }
}
