/** How a value shows in the grid. Pure. */
import type { Cell, RawJson } from './results';

function isRawJson(value: Cell): value is RawJson {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'json' in value;
}

/**
 * The text of a value: strings as sqlgate sent them (PostgreSQL's text), json as PostgreSQL wrote
 * it, arrays and other objects as JSON. NULL has no text: the grid marks it apart, so it never looks
 * like the empty string or the string 'NULL'.
 */
export function cellText(value: Cell): string | null {
  if (value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (isRawJson(value)) return value.json;
  return JSON.stringify(value);
}

/** A cell as JSON text: json values spliced as PostgreSQL wrote them, so no digit or key is lost. */
function cellJson(value: Cell): string {
  if (value !== null && isRawJson(value)) return value.json;
  // JSON.stringify writes -0 as 0; PostgreSQL's float8 -0 stays -0 (valid JSON).
  return Object.is(value, -0) ? '-0' : JSON.stringify(value);
}

/** Column names that appear more than once, each named once. */
export function duplicateNames(fields: readonly { name: string }[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const { name } of fields) (seen.has(name) ? repeated : seen).add(name);
  return [...repeated];
}

/**
 * A result as a JSON document: an array of rows, each an object keyed by column name (`object`, the
 * API's default; a later column of a repeated name wins, as in the API) or an array in column order.
 */
export function jsonExport(
  fields: readonly { name: string }[],
  rows: readonly Cell[][],
  rowMode: string,
): string {
  const lines = rows.map((row) =>
    rowMode === 'array'
      ? `[${row.map(cellJson).join(',')}]`
      : `{${objectEntries(fields, row).join(',')}}`,
  );
  return `[${lines.join(',\n')}]\n`;
}

function objectEntries(fields: readonly { name: string }[], row: readonly Cell[]): string[] {
  const byName = new Map<string, string>();
  fields.forEach((field, column) => byName.set(field.name, cellJson(row[column] ?? null)));
  return [...byName].map(([name, json]) => `${JSON.stringify(name)}:${json}`);
}
