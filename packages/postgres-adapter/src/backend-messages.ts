/**
 * Decoders of server messages other than DataRow: each refuses a body whose strings or sizes do
 * not add up (docs/decisions.md 10.1); pg's parser looped for ever on a string without its NUL.
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

const ROW_DESCRIPTION_FIELD_BYTES = 18; // table OID, column, type OID, size, modifier, format
const AUTH_SASL = 10;

function refuse(what: string): never {
  throw new ProtocolViolation(`The server sent a malformed ${what} message`);
}

/** The string at `from`, ended by a NUL inside the body, and the position after that NUL. */
function cstring(body: Buffer, from: number, what: string): { value: string; next: number } {
  const end = from < body.length ? body.indexOf(0, from) : -1;
  if (end < 0) refuse(what);
  return { value: body.toString('utf8', from, end), next: end + 1 };
}

/** RowDescription: a count, then per column its name and six numbers. */
export function readRowDescription(body: Buffer): WireField[] {
  if (body.length < 2) refuse('RowDescription');
  const fields = new Array<WireField>(body.readInt16BE(0));
  let at = 2;
  for (let index = 0; index < fields.length; index++) {
    const { value: name, next } = cstring(body, at, 'RowDescription');
    at = next + ROW_DESCRIPTION_FIELD_BYTES;
    if (at > body.length) refuse('RowDescription');
    fields[index] = {
      name,
      tableID: body.readUInt32BE(next),
      columnID: body.readInt16BE(next + 4),
      dataTypeID: body.readUInt32BE(next + 6),
      dataTypeSize: body.readInt16BE(next + 10),
      dataTypeModifier: body.readInt32BE(next + 12),
      format: body.readInt16BE(next + 16) === 0 ? 'text' : 'binary',
    };
  }
  if (at !== body.length) refuse('RowDescription');
  return fields;
}

/** ParameterDescription: the type OID of each parameter, `$1` first. */
export function readParameterDescription(body: Buffer): number[] {
  if (body.length < 2 || body.length !== 2 + 4 * body.readUInt16BE(0)) {
    refuse('ParameterDescription');
  }
  const types = new Array<number>(body.readUInt16BE(0));
  for (let index = 0; index < types.length; index++) {
    types[index] = body.readUInt32BE(2 + 4 * index);
  }
  return types;
}

/** CommandComplete: the command tag. */
export function readCommandTag(body: Buffer): string {
  if (body.length === 0 || body.indexOf(0) !== body.length - 1) refuse('CommandComplete');
  return body.toString('utf8', 0, body.length - 1);
}

/** NotificationResponse. */
export function readNotification(body: Buffer): Notification {
  if (body.length < 6) refuse('NotificationResponse');
  const channel = cstring(body, 4, 'NotificationResponse');
  const payload = cstring(body, channel.next, 'NotificationResponse');
  if (payload.next !== body.length) refuse('NotificationResponse');
  return { processId: body.readInt32BE(0), channel: channel.value, payload: payload.value };
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
 * ErrorResponse (and NoticeResponse) as pg-protocol's DatabaseError with pg's field names
 * (pg-errors.ts reads them): (code byte, string) fields ended by a zero byte.
 */
export function readErrorResponse(body: Buffer, what = 'ErrorResponse'): DatabaseError {
  const fields: Record<string, string> = {};
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const { value, next } = cstring(body, at + 1, what);
    fields[String.fromCharCode(body[at] as number)] = value;
    at = next;
  }
  if (at !== body.length - 1) refuse(what);
  const error = new DatabaseError(fields.M ?? '', body.length + 4, 'error');
  for (const [code, name] of Object.entries(ERROR_FIELDS)) {
    (error as unknown as Record<string, string | undefined>)[name] = fields[code];
  }
  return error;
}

/**
 * An Authentication request's code (its first int32); an AuthenticationSASL's list of mechanisms,
 * which pg reads, is checked to end inside the message.
 */
export function readAuthenticationRequest(body: Buffer): number {
  if (body.length < 4) refuse('Authentication');
  const request = body.readInt32BE(0);
  if (request !== AUTH_SASL) return request;
  let at = 4;
  while (at < body.length && body[at] !== 0) at = cstring(body, at, 'AuthenticationSASL').next;
  if (at !== body.length - 1) refuse('AuthenticationSASL');
  return request;
}
