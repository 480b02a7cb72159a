/**
 * The few pieces of PostgreSQL's wire protocol the embedded database's bridge reads and writes:
 * splitting a byte stream into messages, and the answers it makes itself.
 */

/** A startup-phase request code: the protocol version 3.0, or one of the special requests. */
export const PROTOCOL_3 = 196_608;
export const SSL_REQUEST = 80_877_103;
export const GSSENC_REQUEST = 80_877_104;
export const CANCEL_REQUEST = 80_877_102;

/** PostgreSQL's own bounds: a startup packet, and any other message. */
const MAX_STARTUP_BYTES = 10_000;
const MAX_MESSAGE_BYTES = 0x3fff_ffff;

export class WireError extends Error {}

/** A message as it came: its type byte (`Q`, `P`, `d`...) and every byte of it. */
export interface TaggedMessage {
  tag: string;
  bytes: Buffer;
}

/** The first message of a connection: its length, then a request code. */
export function takeStartupMessage(input: Buffer): { code: number; bytes: Buffer } | undefined {
  if (input.length < 8) return undefined;
  const length = input.readInt32BE(0);
  if (length < 8 || length > MAX_STARTUP_BYTES) {
    throw new WireError(`a startup packet of ${length} bytes`);
  }
  if (input.length < length) return undefined;
  return { code: input.readInt32BE(4), bytes: input.subarray(0, length) };
}

/** The complete messages at the start of `input`, and how many bytes they take. */
export function takeTaggedMessages(input: Buffer): { messages: TaggedMessage[]; used: number } {
  const messages: TaggedMessage[] = [];
  let at = 0;
  while (input.length - at >= 5) {
    const length = input.readInt32BE(at + 1);
    if (length < 4 || length > MAX_MESSAGE_BYTES) {
      throw new WireError(`a message of ${length} bytes`);
    }
    if (input.length - at < 1 + length) break;
    const bytes = input.subarray(at, at + 1 + length);
    messages.push({ tag: String.fromCharCode(bytes[0] as number), bytes });
    at += 1 + length;
  }
  return { messages, used: at };
}

/** The SQL text of a simple Query message. */
export function queryText(message: TaggedMessage): string {
  const end = message.bytes.indexOf(0, 5);
  return message.bytes.toString('utf8', 5, end === -1 ? message.bytes.length : end);
}

/**
 * The transaction status of the ReadyForQuery that ends `answer` (`I` idle, `T` in a transaction,
 * `E` in a failed one), or undefined when the answer does not end with one.
 */
export function readyStatusAtEnd(answer: Uint8Array): string | undefined {
  const at = answer.length - 6;
  if (at < 0 || answer[at] !== 0x5a /* Z */) return undefined;
  const length = Buffer.from(answer.buffer, answer.byteOffset + at + 1, 4).readInt32BE(0);
  return length === 5 ? String.fromCharCode(answer[at + 5] as number) : undefined;
}

/** `answer` without its first message of type `tag` (and unchanged when it has none). */
export function withoutFirst(answer: Uint8Array, tag: string): Buffer {
  const bytes = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  const { messages } = takeTaggedMessages(bytes);
  const index = messages.findIndex((message) => message.tag === tag);
  if (index === -1) return bytes;
  return Buffer.concat(messages.filter((_, each) => each !== index).map(({ bytes: m }) => m));
}

function message(tag: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(tag, 0, 'latin1');
  header.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([header, body]);
}

export function simpleQuery(sql: string): Buffer {
  return message('Q', Buffer.from(`${sql}\0`, 'utf8'));
}

export const SYNC = message('S', Buffer.alloc(0));

/** CopyInResponse in text format, columns not counted: a client only needs it to start sending. */
export const COPY_IN_RESPONSE = message('G', Buffer.from([0, 0, 0]));

export function copyFail(reason: string): Buffer {
  return message('f', Buffer.from(`${reason}\0`, 'utf8'));
}

function errorResponse(severity: 'ERROR' | 'FATAL', code: string, text: string): Buffer {
  const fields = [`S${severity}`, `V${severity}`, `C${code}`, `M${text}`].map((f) => `${f}\0`);
  return message('E', Buffer.from(`${fields.join('')}\0`, 'utf8'));
}

/** An ErrorResponse of SQLSTATE `code`, then ReadyForQuery (idle): a Query that did not run. */
export function errorThenReady(code: string, text: string): Buffer {
  return Buffer.concat([
    errorResponse('ERROR', code, text),
    message('Z', Buffer.from('I', 'latin1')),
  ]);
}

/** A FATAL ErrorResponse of SQLSTATE `code`: a login refused, the connection then closed. */
export function fatalError(code: string, text: string): Buffer {
  return errorResponse('FATAL', code, text);
}
