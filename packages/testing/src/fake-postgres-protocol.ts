/**
 * Just enough of PostgreSQL's wire protocol (version 3) to play a server for tests: encoders for
 * the backend messages, a bounded reader of what a client sends, and the well-formed answer a
 * real server would give to a round trip.
 */

/** A backend message: its type byte and its body (everything after the length field). */
export interface BackendMessage {
  type: string;
  body: Buffer;
}

/** A message from the client. `type` is the protocol's type byte, or a name for untyped ones. */
export type FrontendMessage =
  | { type: 'startup'; parameters: Record<string, string> }
  | { type: 'ssl-request' }
  | { type: 'gssenc-request' }
  | { type: 'cancel'; processId: number; secretKey: number }
  | { type: string; body: Buffer };

/** A column of a RowDescription. */
export interface FakeColumn {
  name: string;
  /** Type OID; text (25) when omitted. */
  typeOid?: number;
}

/** Transaction status as ReadyForQuery reports it. */
export type TransactionStatusByte = 'I' | 'T' | 'E';

export const TEXT_OID = 25;
const PROTOCOL_VERSION_3 = 196608;
const SSL_REQUEST_CODE = 80877103;
const GSSENC_REQUEST_CODE = 80877104;
const CANCEL_REQUEST_CODE = 80877102;
/** pg never sends more than this in one message in these tests; anything larger is a broken stream. */
const MAX_FRONTEND_MESSAGE_BYTES = 16 * 1024 * 1024;

const int16 = (value: number): Buffer => {
  const buffer = Buffer.alloc(2);
  buffer.writeInt16BE(value);
  return buffer;
};
const int32 = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(value | 0);
  return buffer;
};
const cstring = (value: string): Buffer => Buffer.concat([Buffer.from(value, 'utf8'), ZERO]);
const ZERO = Buffer.from([0]);

/** The bytes of one message: type, length (of the length field and body), body. */
export function frame(message: BackendMessage): Buffer {
  return frameWithLength(message, message.body.length + 4);
}

/** The bytes of one message with the length field set to `length`, whatever the body is. */
export function frameWithLength(message: BackendMessage, length: number): Buffer {
  const header = Buffer.alloc(5);
  header.write(message.type, 0, 1, 'latin1');
  header.writeInt32BE(length | 0, 1);
  return Buffer.concat([header, message.body]);
}

/** The bytes of several messages, in order. */
export function encode(messages: readonly BackendMessage[]): Buffer {
  return Buffer.concat(messages.map(frame));
}

const message = (type: string, ...parts: Buffer[]): BackendMessage => ({
  type,
  body: Buffer.concat(parts),
});

/** Encoders of the backend messages a fake server needs, well-formed unless a test changes them. */
export const backend = {
  authenticationOk: (): BackendMessage => message('R', int32(0)),
  /** An authentication request: 3 cleartext password, 5 MD5 (with a salt), 10 SASL. */
  authenticationRequest: (code: 3 | 5 | 10): BackendMessage =>
    code === 5
      ? message('R', int32(5), Buffer.from([1, 2, 3, 4]))
      : code === 10
        ? message('R', int32(10), cstring('SCRAM-SHA-256'), ZERO)
        : message('R', int32(code)),
  /** The server's next SCRAM message (AuthenticationSASLContinue). */
  authenticationSaslContinue: (data: string): BackendMessage =>
    message('R', int32(11), Buffer.from(data, 'utf8')),
  parameterStatus: (name: string, value: string): BackendMessage =>
    message('S', cstring(name), cstring(value)),
  backendKeyData: (processId: number, secretKey: number): BackendMessage =>
    message('K', int32(processId), int32(secretKey)),
  readyForQuery: (status: TransactionStatusByte | string): BackendMessage =>
    message('Z', Buffer.from(status.slice(0, 1), 'latin1')),
  parseComplete: (): BackendMessage => message('1'),
  bindComplete: (): BackendMessage => message('2'),
  closeComplete: (): BackendMessage => message('3'),
  noData: (): BackendMessage => message('n'),
  portalSuspended: (): BackendMessage => message('s'),
  emptyQueryResponse: (): BackendMessage => message('I'),
  parameterDescription: (typeOids: readonly number[]): BackendMessage =>
    message('t', int16(typeOids.length), ...typeOids.map(int32)),
  rowDescription: (columns: readonly FakeColumn[]): BackendMessage =>
    message(
      'T',
      int16(columns.length),
      ...columns.map((column) =>
        Buffer.concat([
          cstring(column.name),
          int32(0), // table OID
          int16(0), // column number
          int32(column.typeOid ?? TEXT_OID),
          int16(-1), // type size
          int32(-1), // type modifier
          int16(0), // text format
        ]),
      ),
    ),
  /** A row; a Buffer value is sent as it is (invalid UTF-8, for instance), null as SQL NULL. */
  dataRow: (values: readonly (string | Buffer | null)[]): BackendMessage =>
    message(
      'D',
      int16(values.length),
      ...values.map((value) => {
        if (value === null) return int32(-1);
        const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
        return Buffer.concat([int32(bytes.length), bytes]);
      }),
    ),
  commandComplete: (tag: string): BackendMessage => message('C', cstring(tag)),
  /** ErrorResponse from single-letter fields (S severity, V, C code, M message...), in the given order. */
  errorResponse: (fields: Record<string, string>): BackendMessage =>
    message('E', ...Object.entries(fields).map(([code, value]) => fieldOf(code, value)), ZERO),
  noticeResponse: (fields: Record<string, string>): BackendMessage =>
    message('N', ...Object.entries(fields).map(([code, value]) => fieldOf(code, value)), ZERO),
  notificationResponse: (processId: number, channel: string, payload: string): BackendMessage =>
    message('A', int32(processId), cstring(channel), cstring(payload)),
  copyInResponse: (columns: number): BackendMessage =>
    message(
      'G',
      Buffer.from([0]),
      int16(columns),
      ...Array.from({ length: columns }, () => int16(0)),
    ),
  copyOutResponse: (columns: number): BackendMessage =>
    message(
      'H',
      Buffer.from([0]),
      int16(columns),
      ...Array.from({ length: columns }, () => int16(0)),
    ),
  copyData: (data: string): BackendMessage => message('d', Buffer.from(data)),
  copyDone: (): BackendMessage => message('c'),
};

function fieldOf(code: string, value: string): Buffer {
  return Buffer.concat([Buffer.from(code.slice(0, 1), 'latin1'), cstring(value)]);
}

/** An ErrorResponse as PostgreSQL sends it, with all of S, V, C and M. */
export function serverError(sqlState: string, text: string): BackendMessage {
  return backend.errorResponse({ S: 'ERROR', V: 'ERROR', C: sqlState, M: text });
}

/** The messages a server sends after a successful startup: the client may query afterwards. */
export function loginAnswer(processId: number, secretKey: number): BackendMessage[] {
  return [
    backend.authenticationOk(),
    backend.parameterStatus('server_version', '15.0'),
    backend.parameterStatus('server_encoding', 'UTF8'),
    backend.parameterStatus('client_encoding', 'UTF8'),
    backend.parameterStatus('standard_conforming_strings', 'on'),
    backend.parameterStatus('integer_datetimes', 'on'),
    backend.parameterStatus('DateStyle', 'ISO, MDY'),
    backend.backendKeyData(processId, secretKey),
    backend.readyForQuery('I'),
  ];
}

/**
 * Splits a byte stream from a client into messages. Until the startup message the messages are
 * untyped (length first); afterwards each starts with its type byte. Never throws: a stream that
 * cannot be a client's ends with `broken` set.
 */
export class FrontendReader {
  private pending: Buffer = Buffer.alloc(0);
  private started = false;
  /** Why the stream cannot be read any further, when it cannot. */
  broken: string | undefined;

  push(chunk: Buffer): void {
    if (this.broken) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
  }

  /** The next complete message, or undefined until more bytes arrive. */
  next(): FrontendMessage | undefined {
    if (this.broken) return undefined;
    return this.started ? this.nextTyped() : this.nextUntyped();
  }

  private nextUntyped(): FrontendMessage | undefined {
    if (this.pending.length < 4) return undefined;
    const length = this.pending.readInt32BE(0);
    if (length < 8 || length > MAX_FRONTEND_MESSAGE_BYTES) {
      this.broken = `startup packet length ${length}`;
      return undefined;
    }
    if (this.pending.length < length) return undefined;
    const packet = this.pending.subarray(0, length);
    this.pending = this.pending.subarray(length);
    const code = packet.readInt32BE(4);
    if (code === SSL_REQUEST_CODE) return { type: 'ssl-request' };
    if (code === GSSENC_REQUEST_CODE) return { type: 'gssenc-request' };
    if (code === CANCEL_REQUEST_CODE && length === 16) {
      return {
        type: 'cancel',
        processId: packet.readInt32BE(8),
        secretKey: packet.readInt32BE(12),
      };
    }
    if (code !== PROTOCOL_VERSION_3) {
      this.broken = `unknown startup code ${code}`;
      return undefined;
    }
    this.started = true;
    const words = packet.subarray(8).toString('utf8').split('\0');
    const parameters: Record<string, string> = {};
    for (let i = 0; i + 1 < words.length && words[i] !== ''; i += 2) {
      parameters[words[i] as string] = words[i + 1] as string;
    }
    return { type: 'startup', parameters };
  }

  private nextTyped(): FrontendMessage | undefined {
    if (this.pending.length < 5) return undefined;
    const length = this.pending.readInt32BE(1);
    if (length < 4 || length > MAX_FRONTEND_MESSAGE_BYTES) {
      this.broken = `message length ${length}`;
      return undefined;
    }
    if (this.pending.length < length + 1) return undefined;
    const type = String.fromCharCode(this.pending[0] as number);
    const body = Buffer.from(this.pending.subarray(5, length + 1));
    this.pending = this.pending.subarray(length + 1);
    return { type, body };
  }
}

/** Reads the NUL-terminated strings at the start of a message body. */
export function cstringsOf(body: Buffer, count: number): { strings: string[]; end: number } {
  const strings: string[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const end = body.indexOf(0, offset);
    if (end < 0) break;
    strings.push(body.toString('utf8', offset, end));
    offset = end + 1;
  }
  return { strings, end: offset };
}

/** What a fake statement does: its rows, or an error, and its command tag. */
export interface FakeStatementOutcome {
  columns?: FakeColumn[];
  rows?: string[][];
  tag?: string;
  error?: BackendMessage;
  /** The transaction status after it. */
  status?: TransactionStatusByte;
}

const ROW_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW', 'FETCH', 'EXPLAIN']);
const MAX_FAKE_ROWS = 100_000;

function firstKeyword(text: string): string {
  const stripped = text.replace(/^(?:\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/)*/, '');
  return /^[A-Za-z]+/.exec(stripped)?.[0].toUpperCase() ?? '';
}

/**
 * What the fake server does with one statement. Reads return one text column (named by the first
 * `AS name`, else `?column?`) whose value is the statement's first string literal (else the row
 * number), one row, or n rows for `generate_series(1, n)`. `fake_error('XXXXX')` anywhere makes
 * the statement fail with that SQLSTATE. Other statements succeed with PostgreSQL's command tags.
 */
export function fakeStatementOutcome(
  text: string,
  status: TransactionStatusByte,
): FakeStatementOutcome {
  const failing = /fake_error\(\s*'([0-9A-Z]{5})'\s*\)/.exec(text);
  if (failing) {
    return {
      error: serverError(failing[1] as string, `fake error ${failing[1]}`),
      status: status === 'I' ? 'I' : 'E',
    };
  }
  if (status === 'E' && !/^(ROLLBACK|ABORT|COMMIT|END)$/.test(firstKeyword(text))) {
    return {
      error: serverError(
        '25P02',
        'current transaction is aborted, commands ignored until end of transaction block',
      ),
      status: 'E',
    };
  }
  const keyword = firstKeyword(text);
  if (ROW_KEYWORDS.has(keyword)) {
    const name = /\bas\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i.exec(text)?.[1] ?? '?column?';
    const count = Number(/generate_series\(\s*1\s*,\s*(\d+)\s*\)/i.exec(text)?.[1] ?? 1);
    const literal = /'((?:[^']|'')*)'/.exec(text)?.[1]?.replace(/''/g, "'");
    const rows = Array.from({ length: Math.min(count, MAX_FAKE_ROWS) }, (_, i) => [
      literal ?? String(i + 1),
    ]);
    const tag = keyword === 'SHOW' ? 'SHOW' : `SELECT ${rows.length}`;
    return { columns: [{ name }], rows, tag, status };
  }
  switch (keyword) {
    case '':
      return { status };
    case 'BEGIN':
    case 'START':
      return { tag: 'BEGIN', status: 'T' };
    case 'COMMIT':
    case 'END':
      return { tag: status === 'E' ? 'ROLLBACK' : 'COMMIT', status: 'I' };
    case 'ROLLBACK':
    case 'ABORT':
      return { tag: 'ROLLBACK', status: 'I' };
    case 'INSERT':
      return { tag: 'INSERT 0 1', status };
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
      return { tag: `${keyword} 1`, status };
    case 'DISCARD':
      return { tag: 'DISCARD ALL', status };
    default:
      return { tag: keyword, status };
  }
}

/** One connection's protocol state, as far as the fake server keeps it. */
export class FakeSession {
  status: TransactionStatusByte = 'I';
  private readonly statements = new Map<string, string>();
  private readonly portals = new Map<string, string>();
  /** After an error in the extended protocol, everything up to Sync is skipped. */
  private skippingToSync = false;

  /**
   * The well-formed answer to the messages of one round trip (ending with Sync, Flush or a Query),
   * updating the session as a server would.
   */
  answer(requests: readonly FrontendMessage[]): BackendMessage[] {
    const out: BackendMessage[] = [];
    for (const request of requests) {
      if (!('body' in request)) continue;
      const { type, body } = request;
      if (type === 'S') {
        this.skippingToSync = false;
        out.push(backend.readyForQuery(this.status));
        continue;
      }
      if (type === 'Q') {
        out.push(...this.simpleQuery(cstringsOf(body, 1).strings[0] ?? ''));
        continue;
      }
      if (this.skippingToSync) continue;
      switch (type) {
        case 'P': {
          const [name = '', text = ''] = cstringsOf(body, 2).strings;
          this.statements.set(name, text);
          out.push(backend.parseComplete());
          break;
        }
        case 'B': {
          const [portal = '', statement = ''] = cstringsOf(body, 2).strings;
          this.portals.set(portal, this.statements.get(statement) ?? '');
          out.push(backend.bindComplete());
          break;
        }
        case 'D': {
          const kind = String.fromCharCode(body[0] ?? 0);
          const name = cstringsOf(body.subarray(1), 1).strings[0] ?? '';
          const text = (kind === 'S' ? this.statements.get(name) : this.portals.get(name)) ?? '';
          if (kind === 'S') out.push(backend.parameterDescription([]));
          const outcome = fakeStatementOutcome(text, this.status);
          out.push(outcome.columns ? backend.rowDescription(outcome.columns) : backend.noData());
          break;
        }
        case 'E': {
          const { strings, end } = cstringsOf(body, 1);
          const maxRows = body.length >= end + 4 ? body.readInt32BE(end) : 0;
          out.push(...this.execute(this.portals.get(strings[0] ?? '') ?? '', maxRows));
          break;
        }
        case 'C':
          out.push(backend.closeComplete());
          break;
        default:
          // Flush, CopyData/Done/Fail, a password out of turn: nothing to answer.
          break;
      }
    }
    return out;
  }

  private execute(text: string, maxRows: number): BackendMessage[] {
    const outcome = fakeStatementOutcome(text, this.status);
    this.status = outcome.status ?? this.status;
    if (outcome.error) {
      this.skippingToSync = true;
      return [outcome.error];
    }
    if (outcome.tag === undefined) return [backend.emptyQueryResponse()];
    const rows = outcome.rows ?? [];
    if (maxRows > 0 && rows.length > maxRows) {
      return [...rows.slice(0, maxRows).map(backend.dataRow), backend.portalSuspended()];
    }
    return [...rows.map(backend.dataRow), backend.commandComplete(outcome.tag)];
  }

  private simpleQuery(text: string): BackendMessage[] {
    const out: BackendMessage[] = [];
    // Good enough for the fake: statements of these tests never hold a ';' inside a literal.
    const statements = text.split(';').filter((each) => each.trim() !== '');
    if (statements.length === 0) out.push(backend.emptyQueryResponse());
    for (const statement of statements) {
      const outcome = fakeStatementOutcome(statement, this.status);
      this.status = outcome.status ?? this.status;
      if (outcome.error) {
        out.push(outcome.error);
        break;
      }
      if (outcome.columns) out.push(backend.rowDescription(outcome.columns));
      out.push(...(outcome.rows ?? []).map(backend.dataRow));
      out.push(backend.commandComplete(outcome.tag ?? ''));
    }
    out.push(backend.readyForQuery(this.status));
    return out;
  }
}
