/**
 * An answer of POST /sql as the caller reads it: each value parsed by its column's type OID, as
 * node-postgres parses it (type-parsers.ts), rows as arrays or objects, alone or in the full result.
 */
import { parserFor, type TypeOverrides, type ValueParser } from './type-parsers';
import type { Field, TextResult } from './wire';

export interface ReadOptions {
  /** Rows as arrays in column order; default objects keyed by column name. */
  arrayMode?: boolean;
  /** The whole result (fields, rows, command, rowCount) rather than the rows alone. */
  fullResults?: boolean;
  /** Parsers by type OID, in place of the defaults. */
  types?: TypeOverrides;
}

/** The result of a statement with `fullResults`: what the Neon driver and pg give. */
export interface FullQueryResult<Row> {
  fields: Field[];
  rows: Row[];
  command: string;
  rowCount: number | null;
  rowAsArray: boolean;
}

/** Parsed rows of `result`, as arrays. */
export function parsedRows(
  result: TextResult,
  parserOf: (field: Field) => ValueParser,
): unknown[][] {
  const parsers = result.fields.map(parserOf);
  return result.rows.map((row) =>
    row.map((value, index) => (value === null ? null : (parsers[index] as ValueParser)(value))),
  );
}

/** Rows as objects keyed by column name; of two columns with one name, the last wins (as pg). */
export function rowObjects(fields: readonly Field[], rows: unknown[][]): Record<string, unknown>[] {
  return rows.map((row) => {
    const object: Record<string, unknown> = {};
    fields.forEach((field, index) => {
      // defineProperty: a column named __proto__ is a column, not the object's prototype.
      Object.defineProperty(object, field.name, {
        value: row[index],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    });
    return object;
  });
}

export function readResult(
  result: TextResult,
  { arrayMode = false, fullResults = false, types }: ReadOptions,
): unknown[] | FullQueryResult<unknown> {
  const arrays = parsedRows(result, (field) => parserFor(field.dataTypeID, types));
  const rows = arrayMode ? arrays : rowObjects(result.fields, arrays);
  if (!fullResults) return rows;
  return {
    fields: result.fields,
    rows,
    command: result.command,
    rowCount: result.rowCount,
    rowAsArray: arrayMode,
  };
}
