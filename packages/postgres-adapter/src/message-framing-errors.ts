/** The error of a server that broke the wire protocol. */

/** A server broke the protocol. The connection cannot be trusted any more. */
export class ProtocolViolation extends Error {
  readonly code = 'PROTOCOL_ERROR';

  constructor(message: string) {
    super(message);
    this.name = 'ProtocolViolation';
  }
}
