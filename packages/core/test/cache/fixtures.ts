/** Hand-made statements, results and records, so cache rules are tested without the parser or a database. */
import type { CacheEntryRecord } from '../../src/ports/cache-store';
import type { StatementResult } from '../../src/ports/connections';
import type { ParsedStatement } from '../../src/parser/types';
import { parsedStatement } from '../statement-fixture';

/** A cacheable read of `t` unless overridden. */
export function readStatement(
  text: string,
  overrides: Partial<ParsedStatement> = {},
): ParsedStatement {
  return parsedStatement(text, { relations: { reads: ['t'], writes: [] }, ...overrides });
}

export function selectResult(rows: unknown[] = [{ id: 1 }]): StatementResult {
  return {
    command: 'SELECT',
    rowCount: rows.length,
    fields: [
      {
        name: 'id',
        dataTypeID: 23,
        dataTypeName: 'int4',
        tableID: 0,
        columnID: 0,
        dataTypeSize: 4,
        dataTypeModifier: -1,
        format: 'text',
      },
    ],
    rows,
    truncated: false,
  };
}

/** A record as a store receives it. */
export function record(key: string, overrides: Partial<CacheEntryRecord> = {}): CacheEntryRecord {
  return {
    key,
    scope: 'scope-a',
    server: 'server-a',
    query: `SELECT * FROM ${key}`,
    reads: ['t'],
    result: { rows: [], fields: [], rowCount: 0, command: 'SELECT', truncated: false },
    sizeBytes: 10,
    executionTime: 1.5,
    cachedAt: new Date('2024-01-01T00:00:00.000Z'),
    freshMs: 60_000,
    hits: 0,
    ...overrides,
  };
}

/** A monotonic clock the test moves by hand. Starts away from 0, like performance.now(). */
export class ManualClock {
  constructor(private current = 5_000) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
