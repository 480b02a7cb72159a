/**
 * The streamed answers of POST /api/query (docs/decisions.md 10.22), chosen by the Accept header:
 * NDJSON (`application/x-ndjson`), one JSON object per line, each with one key naming its kind;
 * CSV (`text/csv`, RFC 4180), one statement's header row and rows.
 */
import { serializeResponse, type StreamEvent } from '@sqlgate/core';

export type StreamFormat = 'ndjson' | 'csv';

export const STREAM_CONTENT_TYPES: Record<StreamFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

const FORMATS_BY_TYPE: Record<string, StreamFormat | 'json'> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'text/csv': 'csv',
};

/**
 * The streamed format an Accept header prefers, if any: the listed type with the highest q (ties
 * go to the first listed), q=0 excluding it; JSON when JSON wins, when nothing matches, or for
 * wildcards.
 */
export function streamFormatOf(accept: string | undefined): StreamFormat | undefined {
  if (!accept) return undefined;
  let best: { format: StreamFormat | 'json'; q: number } | undefined;
  for (const range of accept.toLowerCase().split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    const format = FORMATS_BY_TYPE[type];
    if (!format) continue;
    const qParam = params.find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0)) continue;
    if (!best || q > best.q) best = { format, q };
  }
  return best && best.format !== 'json' ? best.format : undefined;
}

/**
 * A row's JSON on one line. Spliced json values keep PostgreSQL's text, whose line breaks can
 * only be whitespace (inside a JSON string they are escaped): they become spaces.
 */
function oneLine(json: string): string {
  return json.includes('\n') || json.includes('\r') ? json.replace(/[\r\n]/g, ' ') : json;
}

/**
 * NDJSON lines: `{"statement": {index, text, fields}}`, then `{"row": row}` per row (an object or
 * an array, per rowMode), `{"end": {index, command, rowCount, executionTime, truncated?}}`; at most
 * one `{"error": {...}}`; and last `{"done": {totalExecutionTime, ...}}`.
 */
export function ndjsonLines(event: StreamEvent): string {
  switch (event.type) {
    case 'statement':
      return `${serializeResponse({
        statement: { index: event.index, text: event.statement, fields: event.fields },
      })}\n`;
    case 'rows': {
      let text = '';
      for (const row of event.rows) text += `{"row":${oneLine(serializeResponse(row))}}\n`;
      return text;
    }
    case 'end': {
      const { type: _type, ...end } = event;
      return `${JSON.stringify({ end })}\n`;
    }
    case 'error':
      return `${serializeResponse({
        error: {
          ...(event.body as object),
          code: event.code,
          ...(event.sqlState ? { sqlState: event.sqlState } : {}),
        },
      })}\n`;
    case 'done': {
      const { type: _type, ...done } = event;
      return `${JSON.stringify({ done })}\n`;
    }
    case 'copy':
      return ''; // COPY data is answered raw (stream-endpoint.ts), never as NDJSON
  }
}

/** One CSV field: NULL is empty and unquoted, the empty string is `""`, specials are quoted. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  if (text === '' || /[",\r\n]/.test(text)) return `"${text.replaceAll('"', '""')}"`;
  return text;
}

function csvLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : ',') + csvField(values[i]);
  return `${line}\r\n`;
}

/**
 * CSV text for an event: the header row from the statement's columns, then the rows (arrays of
 * PostgreSQL's text). `end` and `done` add nothing; an `error` cannot be written in CSV, so it
 * returns null and the transport cuts the response instead.
 */
export function csvText(event: StreamEvent): string | null {
  switch (event.type) {
    case 'statement':
      return csvLine(event.fields.map((field) => field.name));
    case 'rows': {
      let text = '';
      for (const row of event.rows) text += csvLine(row as unknown[]);
      return text;
    }
    case 'error':
      return null;
    case 'end':
      // A row over MAX_RESULT_BYTES was dropped: CSV cannot say so, so the answer is cut.
      return event.truncatedBy === 'bytes' ? null : '';
    default:
      return '';
  }
}
