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
 * COPY data that sqlgate cannot hold within MAX_RESULT_BYTES or MAX_RESULT_BYTES_TOTAL
 * (docs/decisions.md 10.2): it cannot be cut like rows, so the COPY and its connection end.
 */
export class ResultTooLarge extends Error {
  readonly code = 'RESULT_TOO_LARGE';

  constructor(message: string) {
    super(message);
    this.name = 'ResultTooLarge';
  }
}
