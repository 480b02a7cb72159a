/** The errors that end a connection from inside the framing. */

/** A server broke the protocol. The connection cannot be trusted any more. */
export class ProtocolViolation extends Error {
  readonly code = 'PROTOCOL_ERROR';

  constructor(message: string) {
    super(message);
    this.name = 'ProtocolViolation';
  }
}

/**
 * COPY data that sqlgate cannot hold: a line larger than MAX_RESULT_BYTES, or one that
 * MAX_RESULT_BYTES_TOTAL, spent by other answers, cannot hold now (docs/decisions.md 10.2). COPY
 * data cannot be cut like rows, so the COPY is stopped and its connection closed.
 */
export class ResultTooLarge extends Error {
  readonly code = 'RESULT_TOO_LARGE';

  constructor(message: string) {
    super(message);
    this.name = 'ResultTooLarge';
  }
}
