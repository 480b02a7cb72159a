/**
 * For library callers that did not ask for raw JSON text (docs/decisions.md 10.13): the rows a
 * connection returns with every RawJson (json, jsonb, a float -0, inside arrays too) replaced by its
 * parsed value. The HTTP app asks for raw text and never goes through this.
 */
import {
  parseRawJson,
  type BatchResult,
  type Connection,
  type RunOptions,
  type SessionStateVerdict,
  type Settled,
  type StatementResult,
} from '@sqlgate/core';

export class ParsedJsonConnection implements Connection {
  constructor(private readonly connection: Connection) {}

  async run(sql: string, options: RunOptions): Promise<Settled<StatementResult>> {
    const { results, error } = await this.runBatch([sql], options);
    return error ? { ok: false, error } : { ok: true, value: results[0] as StatementResult };
  }

  async runBatch(sql: readonly string[], options: RunOptions): Promise<BatchResult> {
    const sink = options.rowSink;
    // Streamed rows are parsed on their way to the sink.
    const parsedOptions: RunOptions = sink
      ? {
          ...options,
          rowSink: {
            describe: (at, fields) => sink.describe(at, fields),
            ...(sink.admit ? { admit: (bytes: number) => sink.admit?.(bytes) ?? true } : {}),
            row: (at, row, bytes) => sink.row(at, parsedRow(row), bytes),
            ...(sink.copyData
              ? { copyData: (at: number, data: Uint8Array) => sink.copyData?.(at, data) ?? true }
              : {}),
            drained: () => sink.drained(),
            complete: (at, result) => sink.complete(at, result),
          },
        }
      : options;
    const batch = await this.connection.runBatch(sql, parsedOptions);
    batch.results.forEach(parseResult);
    return batch;
  }

  copyFrom(sql: string, source: AsyncIterable<Uint8Array>): Promise<Settled<StatementResult>> {
    return this.connection.copyFrom
      ? this.connection.copyFrom(sql, source)
      : Promise.reject(new Error('the connection cannot copy'));
  }

  transactionStatus(): ReturnType<Connection['transactionStatus']> {
    return this.connection.transactionStatus();
  }

  cancel(): Promise<void> {
    return this.connection.cancel();
  }

  abandon(): void {
    this.connection.abandon?.();
  }

  sessionStateVerdict(): Promise<SessionStateVerdict> {
    return this.connection.sessionStateVerdict?.() ?? Promise.resolve({ kind: 'kept' });
  }

  release(options?: Parameters<Connection['release']>[0]): void {
    this.connection.release(options);
  }
}

/** Replaces in place: the rows were built for this result and nothing else holds them yet. */
export function parseResult(result: StatementResult): StatementResult {
  for (const row of result.rows) parsedRow(row);
  return result;
}

/** The row with its RawJson values parsed, in place. */
function parsedRow(row: unknown): unknown {
  if (Array.isArray(row)) {
    for (let i = 0; i < row.length; i++) row[i] = parsedValue(row[i]);
  } else if (row !== null && typeof row === 'object') {
    const values = row as Record<string, unknown>;
    for (const key of Object.keys(values)) values[key] = parsedValue(values[key]);
  }
  return row;
}

function parsedValue(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? parseRawJson(value) : value;
}
