/**
 * The one reader of what a server sends: checks each message's frame and keeps the facts sqlgate
 * needs (ParameterStatus, BackendKeyData, transaction status, receipts). During the login the
 * checked bytes go on to pg, which authenticates; after it, every message is decoded once and
 * handed to the round trip being read (`reader`). A broken frame throws a ProtocolViolation: the
 * caller ends the connection (docs/decisions.md 10.1).
 */
import type { DatabaseError } from 'pg-protocol';
import {
  readAuthenticationRequest,
  readCommandTag,
  readErrorResponse,
  readNotification,
  readParameterDescription,
  readRowDescription,
  type Notification,
  type WireField,
} from './backend-messages';
import { readDataRow } from './data-row';
import { ProtocolViolation, ResultTooLarge } from './message-framing-errors';

export { ProtocolViolation };

/**
 * Backend message types sqlgate can be sent; V, v and W answer requests sqlgate never makes. COPY
 * messages (H, d, c, G) are refused where they arrive unless asked for (docs/decisions.md 10.22).
 */
const KNOWN_TYPES = new Set([...'123ACDEGHIKNRSTZcdnst'].map((type) => type.charCodeAt(0)));

const DATA_ROW = 0x44; // D
const COPY_DATA = 0x64; // d
const PARAMETER_STATUS = 0x53; // S
const BACKEND_KEY_DATA = 0x4b; // K
const READY_FOR_QUERY = 0x5a; // Z
const ERROR_RESPONSE = 0x45; // E
const NOTICE_RESPONSE = 0x4e; // N
const NOTIFICATION_RESPONSE = 0x41; // A
const COMMAND_COMPLETE = 0x43; // C
const ROW_DESCRIPTION = 0x54; // T
const PARAMETER_DESCRIPTION = 0x74; // t
const PORTAL_SUSPENDED = 0x73; // s
const EMPTY_QUERY_RESPONSE = 0x49; // I
const COPY_IN_RESPONSE = 0x47; // G
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

/** Messages whose body is kept to read facts from; all are tiny in a real server. */
const KEPT_BODIES = new Set([PARAMETER_STATUS, BACKEND_KEY_DATA, READY_FOR_QUERY]);
const MAX_KEPT_BODY_BYTES = 64 * 1024;

const HEADER_BYTES = 5;
const EMPTY = Buffer.alloc(0);
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
  /** ParseComplete, BindComplete and CloseComplete received: proof the server read a round trip. */
  receipts: number;
  /** DataRow messages dropped: too large, or not wanted by the statement reading them. */
  droppedRows: number;
}

/**
 * The round trip being read: each message of the query path, decoded, in order. Between round
 * trips an ErrorResponse ends the connection; only status, notices and notifications may come.
 */
export interface RoundTripReader {
  rowDescription(fields: WireField[]): void;
  parameterDescription(types: number[]): void;
  dataRow(values: (string | null)[]): void;
  commandComplete(tag: string): void;
  portalSuspended(): void;
  emptyQuery(): void;
  /** The server waits for COPY data (CopyInResponse). */
  copyInResponse(): void;
  /** A CopyData message's body: a view of the received bytes, valid only during the call. */
  copyData(chunk: Buffer): void;
  serverError(error: DatabaseError): void;
  /** The round trip is over; the reader is let go of before this is called. */
  readyForQuery(): void;
  /** The connection ended before ReadyForQuery: `error` says why. */
  connectionLost(error: Error): void;
}

/** Messages with strings, which pg reads during the login: each is checked first. */
const CHECKED_IN_LOGIN = new Set([
  AUTHENTICATION,
  ERROR_RESPONSE,
  NOTICE_RESPONSE,
  NOTIFICATION_RESPONSE,
  COMMAND_COMPLETE,
  ROW_DESCRIPTION,
]);

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
  /** The round trip whose answer is being read; set when it is sent, let go of at ReadyForQuery. */
  reader: RoundTripReader | null = null;
  /** Told of each NotificationResponse (LISTEN). */
  onNotification: ((notification: Notification) => void) | null = null;
  /** Set by the statement being read: its later rows are not wanted. */
  dropDataRows = false;
  /** Set by a streamed statement: may a DataRow of this size be read (docs/decisions.md 10.2). */
  admitRow: ((bytes: number) => boolean) | null = null;
  /**
   * Set by a round trip streaming a COPY: why a CopyData message of this size may not be read.
   * COPY data cannot be dropped, so a refusal ends the connection (ResultTooLarge).
   */
  admitCopyData: ((bytes: number) => string | undefined) | null = null;
  /** A larger DataRow is dropped unread (it would not fit the byte bound); set per query. */
  maxRowBytes: number;

  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerFilled = 0;
  /** Bytes of the current message body still to come (after its header). */
  private bodyRemaining = 0;
  private currentType = 0;
  /** The current message is being dropped. */
  private dropping = false;
  /** The current message's body, gathered until it is whole. */
  private body: Buffer[] | null = null;
  /** Where the login's SASL exchange is, until the server's SASLFinal proves its identity. */
  private sasl: SaslStep | undefined;
  /** The server sent AuthenticationOk. */
  private authenticated = false;
  /** The connection ended: nothing more is read. */
  private stopped = false;

  constructor(private readonly limits: FramingLimits) {
    this.maxRowBytes = limits.maxMessageBytes;
  }

  /** Between queries: every row is wanted again, up to the message limit. */
  resetRowLimits(): void {
    this.dropDataRows = false;
    this.maxRowBytes = this.limits.maxMessageBytes;
    this.admitRow = null;
    this.admitCopyData = null;
  }

  /** The login is over (its ReadyForQuery came): from here on, pg is given nothing. */
  get loggedIn(): boolean {
    return this.facts.transactionStatus !== null;
  }

  /** The connection ended: the round trip being read, if any, fails with `error`. */
  connectionLost(error: Error): void {
    this.stopped = true;
    const reader = this.reader;
    this.reader = null;
    reader?.connectionLost(error);
  }

  /** Reads `chunk`: login bytes go to `toPg` once checked, later messages to the reader. */
  scan(chunk: Buffer, toPg: (bytes: Buffer) => void): void {
    let offset = 0;
    let loginBytesFrom = this.loggedIn ? -1 : 0;
    while (offset < chunk.length && !this.stopped) {
      if (this.bodyRemaining > 0) {
        const take = Math.min(this.bodyRemaining, chunk.length - offset);
        if (this.body) this.body.push(chunk.subarray(offset, offset + take));
        offset += take;
        this.bodyRemaining -= take;
        if (this.bodyRemaining === 0) this.endMessage(this.gatheredBody());
      } else {
        const take = Math.min(HEADER_BYTES - this.headerFilled, chunk.length - offset);
        chunk.copy(this.header, this.headerFilled, offset, offset + take);
        this.headerFilled += take;
        offset += take;
        if (this.headerFilled < HEADER_BYTES) break;
        this.startMessage();
        if (this.bodyRemaining <= chunk.length - offset && this.body !== null) {
          // The whole body is in this chunk: read in place, without gathering its pieces.
          const start = offset;
          offset += this.bodyRemaining;
          this.bodyRemaining = 0;
          if (this.currentType === DATA_ROW && this.reader !== null) {
            // A row, the most frequent message, is decoded from the chunk itself.
            this.body = null;
            this.reader.dataRow(readDataRow(chunk, start, offset));
          } else {
            this.endMessage(chunk.subarray(start, offset));
          }
        } else if (this.bodyRemaining === 0) {
          this.endMessage(EMPTY);
        }
      }
      if (loginBytesFrom >= 0 && this.loggedIn) {
        toPg(chunk.subarray(loginBytesFrom, offset));
        loginBytesFrom = -1;
      }
    }
    if (loginBytesFrom >= 0 && offset > loginBytesFrom)
      toPg(chunk.subarray(loginBytesFrom, offset));
  }

  private gatheredBody(): Buffer {
    const pieces = this.body ?? [];
    return pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
  }

  private startMessage(): void {
    const type = this.header[0] as number;
    const length = this.header.readInt32BE(1);
    this.headerFilled = 0;
    if (!KNOWN_TYPES.has(type)) {
      throw new ProtocolViolation(
        `The server sent a message of unknown type 0x${type.toString(16)}`,
      );
    }
    // Authentication and the backend key belong to the login, before the first ReadyForQuery.
    if (this.loggedIn && (type === AUTHENTICATION || type === BACKEND_KEY_DATA)) {
      throw new ProtocolViolation('The server sent a login message after the login');
    }
    if (length < 4 || length > MAX_PROTOCOL_MESSAGE_BYTES) {
      throw new ProtocolViolation(`The server sent a message with an invalid length (${length})`);
    }
    const bodyBytes = length - 4;
    this.currentType = type;
    this.bodyRemaining = bodyBytes;
    this.dropping = false;
    this.body = [];
    if (this.admitCopyData !== null) this.checkCopyMessage(type, bodyBytes, this.admitCopyData);
    if (!this.loggedIn && (type === DATA_ROW || type === COPY_DATA)) {
      throw new ProtocolViolation('The server sent data during the login');
    }
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
        this.body = null;
        this.facts.droppedRows++;
      }
    } else if (bodyBytes > this.limits.maxMessageBytes) {
      throw new ProtocolViolation(`The server sent a message of ${bodyBytes} bytes`);
    } else if (KEPT_BODIES.has(type) && bodyBytes > MAX_KEPT_BODY_BYTES) {
      throw new ProtocolViolation(`The server sent a status message of ${bodyBytes} bytes`);
    } else if (!this.loggedIn && !KEPT_BODIES.has(type) && !CHECKED_IN_LOGIN.has(type)) {
      // During the login pg reads the bodies; only those with facts or strings are looked at.
      this.body = null;
    }
  }

  private endMessage(body: Buffer): void {
    const type = this.currentType;
    const duringLogin = !this.loggedIn; // the login's own ReadyForQuery ends it just below
    this.body = null;
    if (this.dropping) {
      this.dropping = false;
      return;
    }
    if (KEPT_BODIES.has(type)) this.readFacts(type, body);
    if (RECEIPTS.has(type)) this.facts.receipts++;
    if (duringLogin) {
      if (CHECKED_IN_LOGIN.has(type)) this.checkLoginMessage(type, body);
      return;
    }
    if (type !== READY_FOR_QUERY) this.dispatch(type, body);
    else if (this.reader !== null) this.endRoundTrip();
  }

  /** A message after the login, decoded once, to the round trip reading it. */
  private dispatch(type: number, body: Buffer): void {
    if (type === PARAMETER_STATUS || RECEIPTS.has(type)) return;
    if (type === NOTICE_RESPONSE) {
      readErrorResponse(body, 'NoticeResponse'); // nobody reads notices: checked only
      return;
    }
    if (type === NOTIFICATION_RESPONSE) {
      const notification = readNotification(body);
      this.onNotification?.(notification);
      return;
    }
    const reader = this.reader;
    if (reader === null) {
      // The server's reason for ending the connection, thrown as the connection's error.
      if (type === ERROR_RESPONSE) throw readErrorResponse(body);
      throw new ProtocolViolation('The server sent a message outside a round trip');
    }
    switch (type) {
      case DATA_ROW:
        return reader.dataRow(readDataRow(body, 0, body.length));
      case ROW_DESCRIPTION:
        return reader.rowDescription(readRowDescription(body));
      case PARAMETER_DESCRIPTION:
        return reader.parameterDescription(readParameterDescription(body));
      case COMMAND_COMPLETE:
        return reader.commandComplete(readCommandTag(body));
      case PORTAL_SUSPENDED:
        return reader.portalSuspended();
      case EMPTY_QUERY_RESPONSE:
        return reader.emptyQuery();
      case ERROR_RESPONSE:
        return reader.serverError(readErrorResponse(body));
      case COPY_IN_RESPONSE:
        return reader.copyInResponse();
      case COPY_DATA:
        return reader.copyData(body);
      // NoData, CopyOutResponse and CopyDone: nothing to read.
    }
  }

  private endRoundTrip(): void {
    const reader = this.reader as RoundTripReader;
    this.reader = null;
    reader.readyForQuery();
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
   * A message pg reads during the login, decoded once to be checked: pg's parser would loop for
   * ever on a string without its NUL.
   */
  private checkLoginMessage(type: number, body: Buffer): void {
    if (type === AUTHENTICATION) this.checkAuthentication(body);
    else if (type === ERROR_RESPONSE) readErrorResponse(body);
    else if (type === NOTICE_RESPONSE) readErrorResponse(body, 'NoticeResponse');
    else if (type === NOTIFICATION_RESPONSE) readNotification(body);
    else if (type === COMMAND_COMPLETE) readCommandTag(body);
    else readRowDescription(body);
  }

  /**
   * pg follows authentication requests without checking order or sizes: an unstarted SASLContinue
   * threw a TypeError, a short MD5 salt hung the login, and an early AuthenticationOk skipped the
   * check that the server knows the password.
   */
  private checkAuthentication(body: Buffer): void {
    const request = readAuthenticationRequest(body);
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
