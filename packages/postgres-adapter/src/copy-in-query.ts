/**
 * COPY ... FROM STDIN fed from a stream (docs/decisions.md 10.23), as a simple Query so that an
 * error drops the COPY data still on its way; a slow server holds the upload. CommandComplete
 * counts only after CopyDone (docs/decisions.md 10.42).
 */
import { splitSql, type StatementResult } from '@sqlgate/core';
import { serialize } from 'pg-protocol';
import { ProtocolViolation, type RoundTripReader } from './message-framing';
import type { ServerSocket } from './server-socket';

const COMMAND_TAG = /^COPY (\d+)$/;
const COPY_DATA = 0x64; // d

/**
 * Whether `sql` is a COPY statement, read with sqlgate's lexer (comments before it do not count):
 * only a COPY ... FROM STDIN may make a server ask for COPY data (docs/decisions.md 10.42).
 */
export function isCopyStatement(sql: string): boolean {
  try {
    return /^copy\b/i.test(splitSql(sql)[0] ?? '');
  } catch {
    return false; // a text the lexer cannot end is no statement a server could have run
  }
}

export class CopyInQuery implements RoundTripReader {
  readonly done: Promise<StatementResult>;
  private resolve!: (result: StatementResult) => void;
  private reject!: (error: unknown) => void;
  private rowCount: number | null = null;
  /** The server's ErrorResponse, reported once its ReadyForQuery came. */
  private refusal: unknown;
  private sourceError: unknown;
  private copying = false;
  /** CopyDone went out: the server has all the data, and may now say how many rows it loaded. */
  private copyDoneSent = false;
  private readonly started = performance.now();

  constructor(
    private readonly sql: string,
    private readonly source: AsyncIterable<Uint8Array>,
    private readonly socket: ServerSocket,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Sends the statement, and reads its answer from here on. */
  start(): void {
    this.socket.startRoundTrip(this);
    this.socket.write(serialize.query(this.sql));
  }

  copyInResponse(): void {
    if (this.copying) return;
    this.copying = true;
    void this.pump();
  }

  commandComplete(tag: string): void {
    if (!this.copyDoneSent) {
      // It cannot have loaded data it never had: whatever its tag says, the COPY did not happen.
      this.violate(new ProtocolViolation('The server ended the COPY before it received the data'));
      return;
    }
    const count = COMMAND_TAG.exec(tag)?.[1];
    this.rowCount = count === undefined ? null : Number(count);
  }

  /** The upload stops at once; the server drops the data still on its way. */
  serverError(error: unknown): void {
    this.copying = false;
    this.refusal ??= error;
  }

  /** An ErrorResponse that came before the end (a FATAL) says best why the COPY failed. */
  connectionLost(error: Error): void {
    this.copying = false;
    this.reject(this.refusal ?? error);
  }

  readyForQuery(): void {
    // After a CopyFail the server's own error says that nothing was loaded, and why.
    if (this.refusal !== undefined) this.reject(this.refusal);
    else if (this.sourceError !== undefined) this.reject(this.sourceError);
    else if (this.rowCount === null)
      this.reject(new ProtocolViolation('The server ended the COPY without its command tag'));
    else {
      this.resolve({
        command: 'COPY',
        rowCount: this.rowCount,
        fields: [],
        rows: [],
        truncated: false,
        durationMs: Math.round((performance.now() - this.started) * 1000) / 1000,
      });
    }
  }

  /** The upload stops, this COPY fails with `violation`, and the connection is ended. */
  private violate(violation: ProtocolViolation): void {
    this.copying = false;
    this.reject(violation);
    this.socket.abort(violation);
  }

  // A COPY FROM STDIN is answered with none of these.
  rowDescription(): void {
    this.unexpected('described rows');
  }
  parameterDescription(): void {
    this.unexpected('described parameters');
  }
  dataRow(): void {
    this.unexpected('sent a row');
  }
  emptyQuery(): void {
    this.unexpected('found no statement');
  }
  portalSuspended(): void {
    this.unexpected('suspended a portal');
  }
  copyData(): void {
    this.unexpected('sent COPY data');
  }

  private unexpected(what: string): void {
    this.violate(new ProtocolViolation(`The server ${what} in answer to a COPY FROM STDIN`));
  }

  /** Writes the source as CopyData, then CopyDone; CopyFail if the source fails. */
  private async pump(): Promise<void> {
    try {
      for await (const chunk of this.source) {
        if (!this.copying) return; // the server refused a row: the rest is not sent
        if (chunk.length === 0) continue;
        // CopyData: its header, then the chunk itself (a view, not a copy: memory stays flat).
        const header = Buffer.allocUnsafe(5);
        header[0] = COPY_DATA;
        header.writeInt32BE(chunk.length + 4, 1);
        this.socket.write(header);
        if (!this.socket.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) {
          await this.socket.drainedForWriting();
        }
      }
      if (this.copying) {
        this.copyDoneSent = true;
        this.socket.write(serialize.copyDone());
      }
    } catch (error) {
      this.sourceError = error instanceof Error ? error : new Error(String(error));
      if (this.copying) {
        this.socket.write(
          serialize.copyFail(`the upload failed: ${(this.sourceError as Error).message}`),
        );
      }
    } finally {
      this.copying = false;
    }
  }
}
