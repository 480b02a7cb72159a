/**
 * Checks the NUL-terminated strings of the messages pg reads them from. pg's parser finds the end
 * of such a string by looking for a zero byte and never stops at the end of the message or of its
 * buffer: an ErrorResponse whose last field lacks its NUL made it loop for ever, hanging the whole
 * process. So each of these messages is checked whole before pg may parse it
 * (docs/decisions.md 10.1).
 */
import { ProtocolViolation } from './message-framing-errors';

const ROW_DESCRIPTION_FIELD_BYTES = 18; // table OID, column, type OID, size, modifier, format
const SASL_MECHANISMS = 10;

/** Message types whose body is checked by {@link checkStrings}. */
export const TYPES_WITH_STRINGS = new Set([...'ENCTAR'].map((type) => type.charCodeAt(0)));

function refuse(what: string): never {
  throw new ProtocolViolation(`The server sent a malformed ${what} message`);
}

/** Position just past the NUL that ends the string at `from`; refuses when there is none. */
function stringEnd(body: Buffer, from: number, what: string): number {
  const nul = body.indexOf(0, from);
  if (nul < 0) refuse(what);
  return nul + 1;
}

/** A list of (code byte, string) fields ended by a zero byte: ErrorResponse, NoticeResponse. */
function checkFields(body: Buffer, what: string): void {
  let position = 0;
  while (position < body.length && body[position] !== 0) {
    position = stringEnd(body, position + 1, what);
  }
  if (position !== body.length - 1) refuse(what);
}

export function checkStrings(type: number, body: Buffer): void {
  switch (String.fromCharCode(type)) {
    case 'E':
      return checkFields(body, 'ErrorResponse');
    case 'N':
      return checkFields(body, 'NoticeResponse');
    case 'C':
      if (body.length === 0 || body.indexOf(0) !== body.length - 1) refuse('CommandComplete');
      return;
    case 'A': {
      if (body.length < 6) refuse('NotificationResponse');
      const channelEnd = stringEnd(body, 4, 'NotificationResponse');
      if (stringEnd(body, channelEnd, 'NotificationResponse') !== body.length) {
        refuse('NotificationResponse');
      }
      return;
    }
    case 'T': {
      if (body.length < 2) refuse('RowDescription');
      const fields = body.readInt16BE(0);
      let position = 2;
      for (let field = 0; field < fields; field++) {
        position = stringEnd(body, position, 'RowDescription') + ROW_DESCRIPTION_FIELD_BYTES;
        if (position > body.length) refuse('RowDescription');
      }
      if (position !== body.length) refuse('RowDescription');
      return;
    }
    case 'R': {
      if (body.length < 4) refuse('Authentication');
      if (body.readInt32BE(0) !== SASL_MECHANISMS) return;
      let position = 4;
      while (position < body.length && body[position] !== 0) {
        position = stringEnd(body, position, 'AuthenticationSASL');
      }
      if (position !== body.length - 1) refuse('AuthenticationSASL');
      return;
    }
  }
}
