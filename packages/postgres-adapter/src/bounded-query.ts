/**
 * One statement in one round trip, reading at most `maxRows` rows, optionally with sqlgate's own
 * control statements (BEGIN, SET LOCAL, COMMIT) before and after it in the same round trip.
 *
 * Every step goes out as Parse, Bind, (Describe,) Execute, and one Sync closes them all, in a single
 * buffer: one write, one round trip. The statement's Execute asks for maxRows + 1 rows, so the
 * server stops there (PortalSuspended) and closes the portal at Sync: an unbounded SELECT costs
 * neither the server nor this process more than the limit, and the extra row says the result was
 * truncated. pg-cursor reads the same way but needs a second round trip to close the portal.
 * After an error the server skips the remaining steps up to Sync, so a COMMIT sent after a failing
 * statement never runs: the transaction is left failed, and the caller rolls it back.
 */
import type { FieldDescription, RowMode, RunOptions, StatementResult } from '@sqlgate/core';
import { serialize } from 'pg-protocol';
import type { TypeRegistry } from './types/type-registry';
import type { ValueParser } from './types/value-parsers';

// pg's own conversion of JavaScript values to parameters (arrays, Dates, Buffers, JSON objects).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** The part of pg's protocol connection a submittable drives. */
export interface ProtocolConnection {
  stream: { write(buffer: Buffer): boolean };
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
const SYNC = serialize.sync();
const NO_STEPS: readonly string[] = [];

/** Which step of the round trip failed. */
export type Step = 'before' | 'statement' | 'after';

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
  private readonly before: readonly string[];
  private readonly after: readonly string[];
  /** Index of the step whose answer comes next: before..., the statement, after... */
  private step = 0;

  constructor(
    private readonly text: string,
    private readonly options: RunOptions,
    private readonly types: TypeRegistry,
  ) {
    this.before = options.before ?? NO_STEPS;
    this.after = options.after ?? NO_STEPS;
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: ProtocolConnection): Error | null {
    let messages: Buffer[];
    try {
      messages = [
        ...this.before.flatMap(controlMessages),
        serialize.parse({ text: this.text, name: '', types: [] }),
        serialize.bind({
          values: (this.options.params ?? []) as unknown[],
          valueMapper: prepareValue,
        }),
        serialize.describe({ type: 'P', name: '' }),
        serialize.execute({ portal: '', rows: this.options.maxRows + 1 }),
        ...this.after.flatMap(controlMessages),
        SYNC,
      ];
    } catch (error) {
      // A parameter pg cannot convert: nothing is sent but a Sync, whose ReadyForQuery settles this.
      messages = [SYNC];
      this.failure = error;
    }
    connection.stream.write(
      messages.length === 1 ? (messages[0] as Buffer) : Buffer.concat(messages),
    );
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
    this.step++;
  }

  handleCommandComplete(message: { text: string }): void {
    if (this.currentStep() === 'statement') {
      const match = COMMAND_TAG.exec(message.text);
      if (match) {
        this.command = match[1] ?? null;
        const count = match[3] ?? match[2];
        this.rowCount = count === undefined ? null : Number(count);
      }
    }
    this.step++;
  }

  handleEmptyQuery(): void {
    this.step++;
  }

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
    // The step travels with the error: a failed COMMIT is not a failed statement.
    (error as { sqlgateStep?: Step }).sqlgateStep = this.currentStep();
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
    for (const field of this.fields)
      field.dataTypeName = this.types.nameOf(field.dataTypeID) ?? field.dataTypeName;
  }

  private currentStep(): Step {
    if (this.step < this.before.length) return 'before';
    return this.step === this.before.length ? 'statement' : 'after';
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
      row[names[i] as string] =
        value === null || value === undefined ? null : (parsers[i] as ValueParser)(value);
    }
    return row;
  }
}

/** A control statement: no rows, no description. */
function controlMessages(text: string): Buffer[] {
  return [
    serialize.parse({ text, name: '', types: [] }),
    serialize.bind({}),
    serialize.execute({ portal: '', rows: 0 }),
  ];
}
