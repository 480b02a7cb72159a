/**
 * A first, cheap look at every byte a server sends, before pg's parser sees it. It checks the frame
 * of each message (a known type byte, a length that is neither too small nor too large), keeps the
 * few facts sqlgate needs from the connection's own messages (ParameterStatus, BackendKeyData, the
 * transaction status of ReadyForQuery, how many Parse, Bind and Close were answered), and can drop DataRow
 * messages the current statement no longer keeps, so they are never parsed or held. Every kept
 * DataRow is gathered whole and read by one decoder (data-row.ts), wherever the chunks were cut.
 *
 * Anything that breaks the frame throws a ProtocolViolation: the caller ends the connection
 * (docs/decisions.md 10.1). Bytes are passed on in runs that end at a statement boundary, so a
 * change of the drop decision made while a statement completes applies to the next statement's rows.
 */
import { readDataRow } from './data-row';
import { ProtocolViolation, ResultTooLarge } from './message-framing-errors';
import { checkStrings, TYPES_WITH_STRINGS } from './message-checks';

export { ProtocolViolation };

/**
 * Backend message types pg can read and sqlgate can be sent. FunctionCallResponse (V),
 * NegotiateProtocolVersion (v) and CopyBothResponse (W) answer requests sqlgate never makes: from
 * a server they are a protocol fault. The COPY TO STDOUT messages (H, d, c) come for a streamed
 * COPY (docs/decisions.md 10.22); CopyData for any other statement is refused where it arrives
 * (bounded-query.ts). CopyInResponse (G) stays: a COPY FROM STDIN is answered with CopyFail, or
 * fed by copy-in-query.ts; for any other statement it is refused where it arrives.
 */
const KNOWN_TYPES = new Set([...'123ACDEGHIKNRSTZcdnst'].map((type) => type.charCodeAt(0)));

const DATA_ROW = 0x44; // D
const COPY_DATA = 0x64; // d
const PARAMETER_STATUS = 0x53; // S
const BACKEND_KEY_DATA = 0x4b; // K
const READY_FOR_QUERY = 0x5a; // Z
/** ParseComplete (1), BindComplete (2), CloseComplete (3). */
const RECEIPTS = new Set([0x31, 0x32, 0x33]);
const AUTHENTICATION = 0x52; // R
/** Requests of an Authentication message, its first int32. */
const AUTH_OK = 0;
const AUTH_CLEARTEXT = 3;
const AUTH_MD5 = 5;
const AUTH_SASL = 10;
const AUTH_SASL_CONTINUE = 11;
const AUTH_SASL_FINAL = 12;

type SaslStep = 'started' | 'continued' | 'proven';
/** Each SASL request, the step before which it may come, and the step it reaches. */
const SASL_STEPS = new Map<number, { after: SaslStep | undefined; reached: SaslStep }>([
  [AUTH_SASL, { after: undefined, reached: 'started' }],
  [AUTH_SASL_CONTINUE, { after: 'started', reached: 'continued' }],
  [AUTH_SASL_FINAL, { after: 'continued', reached: 'proven' }],
]);

/** Messages after which the next statement's rows, or none, follow. */
const STATEMENT_BOUNDARIES = new Set(
  [...'CsEIZTn'].map((type) => type.charCodeAt(0)), // complete, suspended, error, empty, ready, description, no data
);

/** Messages whose body is kept to read facts from; all are tiny in a real server. */
const KEPT_BODIES = new Set([PARAMETER_STATUS, BACKEND_KEY_DATA, READY_FOR_QUERY]);
const MAX_KEPT_BODY_BYTES = 64 * 1024;

const HEADER_BYTES = 5;
/** PostgreSQL allocates no message over 1 GB (MaxAllocSize): a longer length is a lie. */
const MAX_PROTOCOL_MESSAGE_BYTES = 0x40000000;

/** 64 MiB: far above any status, description or error message a real server sends. */
export const DEFAULT_FRAMING_LIMITS: FramingLimits = { maxMessageBytes: 64 * 1024 * 1024 };

export interface FramingLimits {
  /** Any message other than a DataRow larger than this ends the connection. */
  maxMessageBytes: number;
}

/** What the framing learned from the connection's messages. */
export interface ConnectionFacts {
  /** ParameterStatus values the server reported (server_version, standard_conforming_strings...). */
  readonly parameters: Map<string, string>;
  /** The values as they were when the login ended (before any SET of a session). */
  loginParameters: ReadonlyMap<string, string> | null;
  /** From BackendKeyData, for a CancelRequest. */
  processId: number | null;
  secretKey: number | null;
  /** The status byte of the last ReadyForQuery: I, T or E. */
  transactionStatus: 'I' | 'T' | 'E' | null;
  /**
   * ParseComplete, BindComplete and CloseComplete messages received so far: each proves that the
   * server read the message it answers (a round trip begins with a Parse, a Bind or a Close).
   */
  receipts: number;
  /** DataRow messages dropped: too large, or not wanted by the statement reading them. */
  droppedRows: number;
}

export class MessageFraming {
  readonly facts: ConnectionFacts = {
    parameters: new Map(),
    loginParameters: null,
    processId: null,
    secretKey: null,
    transactionStatus: null,
    receipts: 0,
    droppedRows: 0,
  };
  /** Set by the statement being read: its later rows are not wanted. */
  dropDataRows = false;
  /**
   * Set by a streamed statement: asked, with its size, whether a DataRow within `maxRowBytes` may
   * be read; a row it refuses is dropped unread (docs/decisions.md 10.2).
   */
  admitRow: ((bytes: number) => boolean) | null = null;
  /**
   * Set by a round trip that streams a COPY's data: asked, with its size, whether a CopyData
   * message may be read; the refusal's reason when not. COPY data cannot be dropped, so a refusal
   * ends the connection (ResultTooLarge), and a DataRow there breaks the protocol.
   */
  admitCopyData: ((bytes: number) => string | undefined) | null = null;
  /**
   * Set by the round trip being read: every kept DataRow goes to it, decoded here once gathered
   * whole, never through pg's parser and its events (which cost more than the rest of a row's
   * way). Everything before the row is passed to pg first, so pg has handled the statement's
   * RowDescription, and messages keep their order. Without a consumer (pg's own queries) the
   * checked row is passed to pg.
   */
  rowConsumer: ((values: (string | null)[]) => void) | null = null;
  /**
   * A DataRow larger than this is dropped unread: it could not be returned within the request's
   * byte bound anyway. Set by the query reading rows; between queries, the message limit.
   */
  maxRowBytes: number;

  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFilled = 0;
  /** Bytes of the current message body still to come (after its header). */
  private bodyRemaining = 0;
  private currentType = 0;
  /** The current message is being dropped. */
  private dropping = false;
  /** The current message's body, when its facts are read. */
  private keptBody: Buffer[] | null = null;
  /** The current message is a kept DataRow, gathered in keptBody until it is whole. */
  private readingRow = false;
  /** Where the login's SASL exchange is, until the server's SASLFinal proves its identity. */
  private sasl: SaslStep | undefined;
  /** The server sent AuthenticationOk. */
  private authenticated = false;

  constructor(private readonly limits: FramingLimits) {
    this.maxRowBytes = limits.maxMessageBytes;
  }

  /** Between queries: every row is wanted again, up to the message limit, and read by pg. */
  resetRowLimits(): void {
    this.dropDataRows = false;
    this.maxRowBytes = this.limits.maxMessageBytes;
    this.rowConsumer = null;
    this.admitRow = null;
    this.admitCopyData = null;
  }

  /**
   * Scans `chunk` and calls `deliver` with the bytes pg may parse, in order, in runs that end at
   * statement boundaries. A header split across chunks is held back until it is complete, so a
   * dropped message never reaches pg even in part. Throws ProtocolViolation when the frame is broken.
   */
  scan(chunk: Buffer, deliver: (bytes: Buffer) => void): void {
    let offset = 0;
    let runStart = 0;
    const flush = (end: number): void => {
      if (end > runStart) deliver(chunk.subarray(runStart, end));
      runStart = end;
    };
    while (offset < chunk.length) {
      if (this.bodyRemaining > 0) {
        const take = Math.min(this.bodyRemaining, chunk.length - offset);
        if (this.keptBody) this.keptBody.push(chunk.subarray(offset, offset + take));
        offset += take;
        this.bodyRemaining -= take;
        if (this.dropping || this.readingRow) runStart = offset;
        if (this.bodyRemaining === 0) this.endMessage(offset, flush, deliver);
        continue;
      }
      const carried = this.headerFilled;
      const headerStart = offset; // in this chunk; `carried` bytes of it came earlier
      const take = Math.min(HEADER_BYTES - carried, chunk.length - offset);
      chunk.copy(this.header, carried, offset, offset + take);
      this.headerFilled += take;
      offset += take;
      if (this.headerFilled < HEADER_BYTES) {
        // Deliver what came before the partial header; keep the header for the next chunk.
        flush(headerStart);
        runStart = chunk.length;
        return;
      }
      this.startMessage();
      if (this.dropping || this.readingRow) {
        flush(headerStart);
        runStart = offset;
        if (this.readingRow && this.bodyRemaining <= chunk.length - offset) {
          // The whole row is in this chunk: read in place, without gathering its pieces.
          const end = offset + this.bodyRemaining;
          this.readingRow = false;
          this.keptBody = null;
          this.bodyRemaining = 0;
          this.headerFilled = 0;
          offset = end;
          runStart = end;
          this.takeRow(chunk, headerStart, end, deliver);
          continue;
        }
      } else if (carried > 0) {
        flush(headerStart);
        // A copy: pg's parser may keep the bytes it is given until the rest of the message
        // arrives, and this.header is overwritten by the next header.
        deliver(Buffer.from(this.header.subarray(0, carried)));
      }
      if (this.bodyRemaining === 0) this.endMessage(offset, flush, deliver);
    }
    flush(offset);
  }

  /**
   * A whole DataRow, its body at `bytes[end - bodyBytes, end)`, read by the one decoder: to the
   * round trip's consumer, or checked and passed to pg (`headerStart`: where its header begins in
   * `bytes`, or -1 when the header is not there).
   */
  private takeRow(
    bytes: Buffer,
    headerStart: number,
    end: number,
    deliver: (bytes: Buffer) => void,
  ): void {
    const bodyStart = end - (this.header.readInt32BE(1) - 4);
    const consumer = this.rowConsumer;
    if (consumer !== null) {
      consumer(readDataRow(bytes, bodyStart, end));
      return;
    }
    readDataRow(bytes, bodyStart, end, false);
    deliver(
      headerStart >= 0 && bodyStart - headerStart === HEADER_BYTES
        ? bytes.subarray(headerStart, end)
        : Buffer.concat([this.header, bytes.subarray(bodyStart, end)]),
    );
  }

  private startMessage(): void {
    const type = this.header[0] as number;
    const length = this.header.readInt32BE(1);
    if (!KNOWN_TYPES.has(type)) {
      throw new ProtocolViolation(
        `The server sent a message of unknown type 0x${type.toString(16)}`,
      );
    }
    // Authentication and the backend key belong to the login, before the first ReadyForQuery.
    if (
      this.facts.transactionStatus !== null &&
      (type === AUTHENTICATION || type === BACKEND_KEY_DATA)
    ) {
      throw new ProtocolViolation('The server sent a login message after the login');
    }
    if (length < 4 || length > MAX_PROTOCOL_MESSAGE_BYTES) {
      throw new ProtocolViolation(`The server sent a message with an invalid length (${length})`);
    }
    const bodyBytes = length - 4;
    this.currentType = type;
    this.bodyRemaining = bodyBytes;
    this.keptBody = null;
    this.dropping = false;
    this.readingRow = false;
    if (this.admitCopyData !== null) this.checkCopyMessage(type, bodyBytes, this.admitCopyData);
    if (type === DATA_ROW) {
      if (
        this.dropDataRows ||
        bodyBytes > this.maxRowBytes ||
        (this.admitRow !== null && !this.admitRow(bodyBytes))
      ) {
        // The rows after a row too large are dropped too: an answer keeps a prefix of the
        // result, never one with a hole.
        this.dropDataRows = true;
        this.dropping = true;
        this.facts.droppedRows++;
      } else {
        this.readingRow = true;
        this.keptBody = [];
      }
    } else if (bodyBytes > this.limits.maxMessageBytes) {
      throw new ProtocolViolation(`The server sent a message of ${bodyBytes} bytes`);
    } else if (KEPT_BODIES.has(type)) {
      if (bodyBytes > MAX_KEPT_BODY_BYTES) {
        throw new ProtocolViolation(`The server sent a status message of ${bodyBytes} bytes`);
      }
      this.keptBody = [];
    } else if (TYPES_WITH_STRINGS.has(type)) {
      // Checked whole before its last byte reaches pg (message-checks.ts).
      this.keptBody = [];
    }
  }

  private endMessage(
    offset: number,
    flush: (end: number) => void,
    deliver: (bytes: Buffer) => void,
  ): void {
    const type = this.currentType;
    this.headerFilled = 0;
    if (this.readingRow) {
      const pieces = this.keptBody ?? [];
      const body = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
      this.readingRow = false;
      this.keptBody = null;
      this.takeRow(body, -1, body.length, deliver);
      return;
    }
    if (this.keptBody) {
      const body =
        this.keptBody.length === 1 ? (this.keptBody[0] as Buffer) : Buffer.concat(this.keptBody);
      this.keptBody = null;
      if (TYPES_WITH_STRINGS.has(type)) {
        checkStrings(type, body);
        if (type === AUTHENTICATION) this.checkAuthentication(body);
      } else this.readFacts(type, body);
    }
    if (RECEIPTS.has(type)) this.facts.receipts++;
    if (this.dropping) {
      this.dropping = false;
      return;
    }
    // The reader may change its mind about rows while this message is handled.
    if (STATEMENT_BOUNDARIES.has(type)) flush(offset);
  }

  /** In answer to a COPY TO STDOUT: no row, and no line sqlgate cannot hold. */
  private checkCopyMessage(
    type: number,
    bodyBytes: number,
    admit: (bytes: number) => string | undefined,
  ): void {
    if (type === DATA_ROW) {
      throw new ProtocolViolation('The server sent a row in answer to a COPY TO STDOUT');
    }
    if (type !== COPY_DATA) return;
    const refusal = admit(bodyBytes);
    if (refusal !== undefined) throw new ResultTooLarge(refusal);
  }

  /**
   * pg follows the server's authentication requests without checking their order or sizes: a
   * SASLContinue that no SASL exchange began made it throw a TypeError, whose text reached the
   * caller, an MD5 request without its 4-byte salt left the login hanging, and an
   * AuthenticationOk before SASLFinal skipped the check that the server knows the password.
   */
  private checkAuthentication(body: Buffer): void {
    const request = body.readInt32BE(0);
    // SCRAM is SASL, one SASLContinue, SASLFinal: each step only after the one before it.
    const step = SASL_STEPS.get(request);
    if (step !== undefined) {
      if (this.sasl !== step.after) {
        throw new ProtocolViolation('The server sent the steps of a SASL exchange out of order');
      }
      this.sasl = step.reached;
    } else if (request === AUTH_OK && this.sasl !== undefined && this.sasl !== 'proven') {
      throw new ProtocolViolation('The server ended a SASL exchange without proving its identity');
    } else if (request === AUTH_OK && this.authenticated) {
      throw new ProtocolViolation('The server sent AuthenticationOk twice');
    } else if (request === AUTH_MD5 && body.length !== 8) {
      throw new ProtocolViolation('The server sent a malformed AuthenticationMD5Password message');
    } else if ((request === AUTH_OK || request === AUTH_CLEARTEXT) && body.length !== 4) {
      throw new ProtocolViolation('The server sent a malformed Authentication message');
    }
    if (request === AUTH_OK) this.authenticated = true;
  }

  private readFacts(type: number, body: Buffer): void {
    if (type === PARAMETER_STATUS) {
      const nameEnd = body.indexOf(0);
      const valueEnd = body.indexOf(0, nameEnd + 1);
      if (nameEnd < 0 || valueEnd < 0) {
        throw new ProtocolViolation('The server sent a malformed ParameterStatus message');
      }
      const name = body.toString('utf8', 0, nameEnd);
      const value = body.toString('utf8', nameEnd + 1, valueEnd);
      // Values are read as UTF-8: in another encoding they would come back changed, their
      // characters replaced (docs/decisions.md 10.12). The rows of the statement that changed it
      // came before this message, already in the new encoding.
      if (name === 'client_encoding' && value !== 'UTF8') {
        throw new ProtocolViolation(
          `The server's client_encoding became ${value}; sqlgate reads values only as UTF8`,
        );
      }
      this.facts.parameters.set(name, value);
    } else if (type === BACKEND_KEY_DATA) {
      if (body.length < 8) {
        throw new ProtocolViolation('The server sent a malformed BackendKeyData message');
      }
      this.facts.processId = body.readInt32BE(0);
      this.facts.secretKey = body.readInt32BE(4);
    } else if (type === READY_FOR_QUERY) {
      const status = String.fromCharCode(body[0] ?? 0);
      if (body.length !== 1 || (status !== 'I' && status !== 'T' && status !== 'E')) {
        throw new ProtocolViolation('The server sent a malformed ReadyForQuery message');
      }
      if (this.facts.transactionStatus === null) {
        // PostgreSQL always says AuthenticationOk before the login ends; libpq refuses a login
        // without it too.
        if (!this.authenticated) {
          throw new ProtocolViolation('The server ended the login without authenticating it');
        }
        this.facts.loginParameters = new Map(this.facts.parameters);
      }
      this.facts.transactionStatus = status;
    }
  }
}
