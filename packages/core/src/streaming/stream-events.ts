/**
 * What a streamed request produces, in order (docs/decisions.md 10.22): per statement a header,
 * row batches and a trailer; an error if it failed after streaming began; last `done`, without
 * which the consumer knows the stream was cut.
 */
import type { FieldDescription } from '../ports/connections';
import type { QueryResponseBody } from '../execution/response';
import type { ServedBy } from '../routing/replica-choice';

export type StreamEvent =
  /** A statement begins: its index in the request, its text as executed, its columns. */
  | { type: 'statement'; index: number; statement: string; fields: FieldDescription[] }
  /** Rows of the statement last begun, in order. */
  | { type: 'rows'; rows: unknown[] }
  /** Data of a COPY ... TO STDOUT, as the server sent it. */
  | { type: 'copy'; data: Uint8Array }
  /** The statement finished. */
  | {
      type: 'end';
      index: number;
      command: string | null;
      rowCount: number | null;
      executionTime: number;
      /** Not every row was sent: `maxRows` (when named) or a row over MAX_RESULT_BYTES. */
      truncated?: boolean;
      truncatedBy?: 'rows' | 'bytes';
    }
  /**
   * The request failed after its first statement began: the fields of the error body the
   * buffered answer would have had (`error`, `failedStatementIndex`, `cause`...), and its code.
   */
  | {
      type: 'error';
      body: QueryResponseBody;
      code: string;
      sqlState?: string;
      /** For a defect (INTERNAL_ERROR): what went wrong, to be logged and never sent. */
      internal?: unknown;
    }
  /** The answer is complete. */
  | {
      type: 'done';
      totalExecutionTime: number;
      transactionUsed?: boolean;
      rolledBack?: boolean;
      warnings?: string[];
      /** On a named connection with replicas (docs/decisions.md 13). */
      servedBy?: ServedBy;
      consistencyToken?: string;
    };
