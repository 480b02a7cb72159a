/**
 * Which fields of the connection form keep a run from reaching the database, so that the form can
 * mark them (aria-invalid and a visible mark) instead of leaving a lone error in the results. Two
 * sources: the form itself (a required field empty, a port that is no port), and the answer of a
 * run that failed before any statement ran because connecting failed. Pure: no DOM.
 */
import {
  blankForm,
  FormError,
  queryBody,
  usesKey,
  type ConnectionForm,
  type OfferedConnection,
} from './request-fields';
import type { RunResult } from './results';

export type FormField = keyof ConnectionForm;

/**
 * Every field the form cannot turn into a request, with the message of the first. request-fields.ts
 * stops at the first; each field it names is set to a usable value and the form read again.
 */
export function formProblems(
  form: ConnectionForm,
  offered?: OfferedConnection,
): { fields: FormField[]; message: string } | undefined {
  const blank = blankForm() as unknown as Record<string, unknown>;
  const trial = { ...form } as unknown as Record<string, unknown>;
  const fields: FormField[] = [];
  let message: string | undefined;
  for (;;) {
    try {
      queryBody(trial as unknown as ConnectionForm, 'SELECT 1', offered);
      break;
    } catch (error) {
      if (!(error instanceof FormError)) throw error;
      message ??= error.message;
      if (!fields.includes(error.field)) {
        // The blank form's value first: usable for every field but a required one left empty.
        fields.push(error.field);
        trial[error.field] = blank[error.field];
      } else if (trial[error.field] === '') {
        trial[error.field] = 'x';
      } else {
        throw error;
      }
    }
  }
  return message === undefined ? undefined : { fields, message };
}

/** Fields named by the code (SQLSTATE, system code or sqlgate's) of a failed connection attempt. */
const CREDENTIAL_FIELDS_BY_CODE: Record<string, FormField[]> = {
  '28P01': ['password'],
  '28000': ['user', 'password'],
  '3D000': ['database'],
  ECONNREFUSED: ['host', 'port'],
  ENOTFOUND: ['host'],
  EAI_AGAIN: ['host'],
  EHOSTUNREACH: ['host'],
  ETIMEDOUT: ['host', 'port'],
  CONNECT_TIMEOUT: ['host', 'port'],
  TARGET_NOT_ALLOWED: ['host', 'port'],
  MISSING_FIELDS: ['host', 'port', 'user', 'database'],
};

const KEY_FIELDS_BY_CODE: Record<string, FormField[]> = {
  UNAUTHORIZED: ['token'],
  FORBIDDEN: ['connection'],
  MISSING_FIELDS: ['connection', 'token'],
};

/**
 * The fields to mark after `run`, when it failed before any statement ran for want of usable
 * connection settings; none for any other outcome (a statement's own error, a limit, a refusal
 * that no field can fix).
 */
export function runProblems(
  run: RunResult,
  form: ConnectionForm,
): { fields: FormField[]; message: string } | undefined {
  const { error } = run.outcome;
  if (run.outcome.state !== 'failed' || run.statements.length > 0 || error?.code === undefined) {
    return undefined;
  }
  const fields = (usesKey(form) ? KEY_FIELDS_BY_CODE : CREDENTIAL_FIELDS_BY_CODE)[error.code];
  if (fields === undefined) return undefined;
  return { fields, message: `${error.code}: ${error.message}` };
}
