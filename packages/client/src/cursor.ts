/**
 * pg-cursor's surface over `stream()`: `client.query(new Cursor(text, values))`, then `read(n)`
 * until it gives no rows, then `close()` — how Kysely's PostgresDialect streams (its `cursor`
 * option). Rows are read from sqlgate only as `read` asks for them; `close()` before the end
 * stops the statement.
 */
import { SqlgateError } from './errors';

export interface CursorConfig {
  /** `array`: rows as arrays in column order. */
  rowMode?: 'array';
}

export class Cursor {
  private rows: AsyncIterator<unknown> | undefined;
  private refusal: Error | undefined;

  constructor(
    readonly text: string,
    readonly values: readonly unknown[] = [],
    readonly config: CursorConfig = {},
  ) {}

  /** @internal Given its rows by the client that runs it. */
  open(rows: AsyncIterable<unknown>): this {
    this.rows = rows[Symbol.asyncIterator]();
    return this;
  }

  /** @internal Refused by the client that was asked to run it: every read says why. */
  refuse(reason: Error): this {
    this.refusal = reason;
    return this;
  }

  /** Up to `count` more rows; none once the statement's rows are all read. */
  async read(count: number): Promise<unknown[]> {
    if (this.refusal) throw this.refusal;
    if (!this.rows)
      throw new SqlgateError(
        'A cursor reads once a Pool client runs it (client.query(cursor))',
        undefined,
      );
    const taken: unknown[] = [];
    while (taken.length < count) {
      const next = await this.rows.next();
      if (next.done) break;
      taken.push(next.value);
    }
    return taken;
  }

  /** Ends the rows: a statement still running is stopped. */
  async close(): Promise<void> {
    await this.rows?.return?.();
  }
}
