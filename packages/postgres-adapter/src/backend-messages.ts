/**
 * Decoders of the messages a server sends on the query path, other than DataRow (data-row.ts). Each
 * takes a message's whole body, already checked by message-checks.ts where it holds strings, and
 * refuses one whose sizes do not add up (docs/decisions.md 10.1).
 */
import type { FieldDescription } from '@sqlgate/core';
import { DatabaseError } from 'pg-protocol';
import { ProtocolViolation } from './message-framing-errors';

/** A column of a RowDescription: its type has no name yet. */
export type WireField = Omit<FieldDescription, 'dataTypeName'>;

/** A NotificationResponse: what NOTIFY sent to a channel this connection listens on. */
export interface Notification {
  processId: number;
  channel: string;
  payload: string;
}

/** The string that starts at `from` and ends before the NUL at `end` (checked to be there). */
function cstring(body: Buffer, from: number): { value: string; next: number } {
  const end = body.indexOf(0, from);
  return { value: body.toString('utf8', from, end), next: end + 1 };
}

/** RowDescription: a count, then per column its name and six numbers. */
export function readRowDescription(body: Buffer): WireField[] {
  const count = body.readInt16BE(0);
  const fields = new Array<WireField>(count);
  let at = 2;
  for (let index = 0; index < count; index++) {
    const { value: name, next } = cstring(body, at);
    fields[index] = {
      name,
      tableID: body.readUInt32BE(next),
      columnID: body.readInt16BE(next + 4),
      dataTypeID: body.readUInt32BE(next + 6),
      dataTypeSize: body.readInt16BE(next + 10),
      dataTypeModifier: body.readInt32BE(next + 12),
      format: body.readInt16BE(next + 16) === 0 ? 'text' : 'binary',
    };
    at = next + 18;
  }
  return fields;
}

/** ParameterDescription: the type OID of each parameter, `$1` first. */
export function readParameterDescription(body: Buffer): number[] {
  if (body.length < 2 || body.length !== 2 + 4 * body.readUInt16BE(0)) {
    throw new ProtocolViolation('The server sent a malformed ParameterDescription message');
  }
  const types = new Array<number>(body.readUInt16BE(0));
  for (let index = 0; index < types.length; index++) {
    types[index] = body.readUInt32BE(2 + 4 * index);
  }
  return types;
}

/** CommandComplete: the command tag. */
export function readCommandTag(body: Buffer): string {
  return body.toString('utf8', 0, body.length - 1);
}

/** NotificationResponse. */
export function readNotification(body: Buffer): Notification {
  const channel = cstring(body, 4);
  return {
    processId: body.readInt32BE(0),
    channel: channel.value,
    payload: cstring(body, channel.next).value,
  };
}

/** The fields of an ErrorResponse, by their code byte, as PostgreSQL documents them. */
const ERROR_FIELDS: Record<string, string> = {
  S: 'severity',
  C: 'code',
  D: 'detail',
  H: 'hint',
  P: 'position',
  p: 'internalPosition',
  q: 'internalQuery',
  W: 'where',
  s: 'schema',
  t: 'table',
  c: 'column',
  d: 'dataType',
  n: 'constraint',
  F: 'file',
  L: 'line',
  R: 'routine',
};

/**
 * ErrorResponse, as pg-protocol's DatabaseError with the same field names (the domain mapping,
 * pg-errors.ts, reads them): the message from M, every other field known by its code byte.
 */
export function readErrorResponse(body: Buffer): DatabaseError {
  const fields: Record<string, string> = {};
  let at = 0;
  while (body[at] !== 0) {
    const code = String.fromCharCode(body[at] as number);
    const { value, next } = cstring(body, at + 1);
    fields[code] = value;
    at = next;
  }
  const error = new DatabaseError(fields.M ?? '', body.length + 4, 'error');
  for (const [code, name] of Object.entries(ERROR_FIELDS)) {
    (error as unknown as Record<string, string | undefined>)[name] = fields[code];
  }
  return error;
}
