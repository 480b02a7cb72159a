/**
 * What a run produced, built from sqlgate's answer: the NDJSON stream line by line, or a JSON answer
 * (runs that use the result cache, which streams never read). Pure: no DOM, no fetch.
 */
import { splitJsonArray } from './ndjson';
import type { TextLocation } from './location';

export interface Field {
  name: string;
  dataTypeName?: string;
  dataTypeID?: number;
}

/** A json or jsonb value as PostgreSQL wrote it: parsed, it could lose digits and keys. */
export interface RawJson {
  json: string;
}

export type Cell = string | number | boolean | null | RawJson | unknown[] | Record<string, unknown>;

export interface ErrorInfo {
  /** PostgreSQL's message when there is one, else sqlgate's sentence. */
  message: string;
  /** sqlgate's sentence about the whole request when it differs ('One or more statements failed'). */
  context?: string;
  code?: string;
  detail?: string;
  hint?: string;
  where?: string;
  statementIndex?: number;
  location?: TextLocation;
  /** A refusal's Retry-After (429, 503): seconds before the request may be sent again. */
  retryAfterSeconds?: number;
}

export interface StatementResult {
  index: number;
  text: string;
  fields: Field[];
  rows: Cell[][];
  /**
   * `incomplete`: the answer ended (cancelled, cut) before this statement's end; `cancelled`: it
   * was the statement running when Cancel stopped the run.
   */
  state: 'running' | 'done' | 'failed' | 'cancelled' | 'incomplete';
  command?: string | null;
  rowCount?: number | null;
  executionTime?: number;
  truncated?: boolean;
  truncatedBy?: string;
  cacheStatus?: string;
  error?: ErrorInfo;
  /** The console stopped keeping rows (MAX_KEPT_ROW_CHARACTERS): more arrived than it holds. */
  droppedByConsole?: boolean;
}

export interface RunOutcome {
  state: 'running' | 'succeeded' | 'failed' | 'cancelled' | 'cut';
  error?: ErrorInfo;
  /** HTTP status of an answer that failed before any statement ran. */
  status?: number;
  transactionUsed?: boolean;
  rolledBack?: boolean;
  totalExecutionTime?: number;
  warnings?: string[];
}

export interface RunResult {
  statements: StatementResult[];
  outcome: RunOutcome;
  /** The answer of a lone `COPY ... TO STDOUT`: the COPY data itself, not rows. */
  copyData?: Blob;
  /** Whether the rows came from the NDJSON stream (else from a JSON answer). */
  streamed?: boolean;
}

export function emptyRun(): RunResult {
  return { statements: [], outcome: { state: 'running' } };
}

const JSON_TYPES = new Set(['json', 'jsonb']);

/** Whether a column's values stay as PostgreSQL's JSON text. */
function isJsonColumn(field: Field | undefined): boolean {
  return field?.dataTypeName !== undefined && JSON_TYPES.has(field.dataTypeName);
}

/**
 * Applies one NDJSON line to the run. Rows are read as arrays (the console always asks for
 * `rowMode: 'array'`, so two columns of one name both show).
 */
export function applyLine(run: RunResult, line: string): void {
  if (isRowLine(line)) {
    const statement = run.statements[run.statements.length - 1];
    if (!statement) throw new Error('A row came before its statement');
    statement.rows.push(rowOf(line, statement.fields));
    return;
  }
  const message = JSON.parse(line) as Record<string, unknown>;
  if ('statement' in message) {
    const { index, text, fields } = message.statement as {
      index: number;
      text: string;
      fields: Field[];
    };
    run.statements.push({ index, text, fields: fields ?? [], rows: [], state: 'running' });
  } else if ('end' in message) {
    const end = message.end as Partial<StatementResult> & { index: number };
    const statement = run.statements.find((candidate) => candidate.index === end.index);
    if (statement) Object.assign(statement, endFieldsOf(end), { state: 'done' });
  } else if ('error' in message) {
    failRun(run, message.error as Record<string, unknown>);
  } else if ('done' in message) {
    const done = message.done as Omit<RunOutcome, 'state'>;
    const state = run.outcome.state === 'running' ? 'succeeded' : run.outcome.state;
    run.outcome = { ...run.outcome, ...outcomeFieldsOf(done), state };
  }
}

/** One row line's values; json columns keep their text. */
function rowOf(line: string, fields: Field[]): Cell[] {
  const start = line.indexOf('[');
  if (!fields.some(isJsonColumn)) return (JSON.parse(line) as { row: Cell[] }).row;
  return splitJsonArray(line, start).map((element, column) =>
    isJsonColumn(fields[column]) && element !== 'null'
      ? { json: element }
      : (JSON.parse(element) as Cell),
  );
}

const END_FIELDS = [
  'command',
  'rowCount',
  'executionTime',
  'truncated',
  'truncatedBy',
  'cacheStatus',
] as const;
const OUTCOME_FIELDS = ['transactionUsed', 'rolledBack', 'totalExecutionTime', 'warnings'] as const;

function endFieldsOf(source: Record<string, unknown>): Partial<StatementResult> {
  return pick(source, END_FIELDS) as Partial<StatementResult>;
}

function outcomeFieldsOf(source: object): Partial<RunOutcome> {
  return pick(source, OUTCOME_FIELDS) as Partial<RunOutcome>;
}

function pick<T extends string>(source: object, names: readonly T[]): Partial<Record<T, unknown>> {
  const picked: Partial<Record<T, unknown>> = {};
  for (const name of names) {
    const value = (source as Record<string, unknown>)[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

/**
 * An error body of sqlgate (`{error: QueryErrorObject}`, `{error: sentence, cause, ...}`, or the
 * fields of an NDJSON `error` line) as one message with its code and place.
 */
export function errorInfoOf(body: Record<string, unknown>): ErrorInfo {
  const error = body.error;
  const cause = (body.cause ?? (typeof error === 'object' ? error : undefined)) as
    Record<string, unknown> | undefined;
  const sentence = typeof error === 'string' ? error : undefined;
  const message =
    typeof cause?.message === 'string' ? cause.message : (sentence ?? 'The request failed');
  const info: ErrorInfo = { message };
  if (sentence !== undefined && sentence !== message) info.context = sentence;
  const code = cause?.code ?? body.code;
  if (typeof code === 'string') info.code = code;
  for (const name of ['detail', 'hint', 'where'] as const) {
    if (typeof cause?.[name] === 'string') info[name] = cause[name] as string;
  }
  const index = cause?.statementIndex ?? body.failedStatementIndex ?? body.statementIndex;
  if (typeof index === 'number') info.statementIndex = index;
  const location = (cause?.location ?? body.location) as TextLocation | undefined;
  if (location && typeof location.line === 'number' && typeof location.column === 'number') {
    info.location = { line: location.line, column: location.column };
  }
  return info;
}

/** Marks the run failed (or cancelled) and the statement the error names. */
function failRun(run: RunResult, body: Record<string, unknown>, status?: number): void {
  const error = errorInfoOf(body);
  const cancelled = body.cancelled === true || error.code === 'REQUEST_CANCELLED';
  run.outcome = {
    ...run.outcome,
    state: cancelled ? 'cancelled' : 'failed',
    error,
    ...(pick(body, ['transactionUsed', 'rolledBack'] as const) as Partial<RunOutcome>),
    ...(status !== undefined ? { status } : {}),
  };
  if (error.statementIndex === undefined) return;
  let statement = run.statements.find((candidate) => candidate.index === error.statementIndex);
  if (!statement) {
    statement = { index: error.statementIndex, text: '', fields: [], rows: [], state: 'failed' };
    run.statements.push(statement);
    run.statements.sort((a, b) => a.index - b.index);
  }
  statement.state = cancelled ? 'cancelled' : 'failed';
  statement.error = error;
}

/** PostgreSQL's SQLSTATE for a statement stopped by a cancel request (query_canceled). */
export const QUERY_CANCELED = '57014';

/**
 * A run stopped by its Cancel button, told as cancelled rather than failed: the error of the
 * statement the cancel stopped is 57014 (query_canceled), when sqlgate's answer did not already
 * say `cancelled`. A 57014 of a run nobody cancelled (a statement timeout) stays a failure.
 */
export function asCancelled(run: RunResult): void {
  if (run.outcome.state === 'failed' && run.outcome.error?.code === QUERY_CANCELED) {
    run.outcome = { ...run.outcome, state: 'cancelled' };
  }
  // sqlgate may say the run was cancelled (REQUEST_CANCELLED) while its statement says 57014.
  if (run.outcome.state !== 'cancelled') return;
  for (const statement of run.statements) {
    if (statement.state === 'failed' && statement.error?.code === QUERY_CANCELED) {
      statement.state = 'cancelled';
    }
  }
}

/** A statement of a JSON answer: QueryExecutionResult, or an entry of `results`. */
function statementOfJson(entry: Record<string, unknown>, index: number): StatementResult {
  const fields = (entry.fields as Field[] | undefined) ?? [];
  const rows = ((entry.rows as Cell[][] | undefined) ?? []).map((row) =>
    row.map((value, column) =>
      isJsonColumn(fields[column]) && value !== null ? { json: JSON.stringify(value) } : value,
    ),
  );
  const statement: StatementResult = {
    index,
    text: typeof entry.statement === 'string' ? entry.statement : '',
    fields,
    rows,
    state: entry.error === undefined ? 'done' : 'failed',
    ...endFieldsOf(entry),
  };
  if (entry.error !== undefined) statement.error = errorInfoOf(entry);
  return statement;
}

/** The run a JSON answer describes. */
export function runOfJsonAnswer(status: number, body: unknown): RunResult {
  const run = emptyRun();
  if (typeof body !== 'object' || body === null) {
    run.outcome = { state: 'failed', status, error: { message: `HTTP ${status}` } };
    return run;
  }
  const answer = body as Record<string, unknown>;
  if (Array.isArray(answer.results)) {
    run.statements = (answer.results as Record<string, unknown>[]).map(statementOfJson);
  } else if (Array.isArray(answer.rows)) {
    run.statements = [statementOfJson(answer, 0)];
  }
  run.outcome = {
    state: 'succeeded',
    ...outcomeFieldsOf(answer),
  };
  if (answer.error !== undefined) {
    // A MultipleStatementsResponse names the failed statement; its entry holds the cause.
    const index = answer.failedStatementIndex;
    const entry =
      Array.isArray(answer.results) && typeof index === 'number'
        ? answer.results[index]
        : undefined;
    const cause = answer.cause ?? (entry as Record<string, unknown> | undefined)?.cause;
    failRun(
      run,
      cause === undefined ? answer : { ...answer, cause },
      status >= 400 ? status : undefined,
    );
  }
  return run;
}

/**
 * The seconds of a Retry-After header, which sqlgate sends as a whole number of seconds; undefined
 * without one (or with a date, which sqlgate never sends).
 */
export function retryAfterSeconds(header: string | null): number | undefined {
  const text = header?.trim() ?? '';
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/** A refusal's Retry-After in words. */
export function retryAfterText(seconds: number): string {
  return `Retry after ${seconds} s`;
}

/** The run with the answer's Retry-After on its error, when it failed and the answer had one. */
export function withRetryAfter(run: RunResult, header: string | null): RunResult {
  const seconds = retryAfterSeconds(header);
  if (seconds !== undefined && run.outcome.error) run.outcome.error.retryAfterSeconds = seconds;
  return run;
}

/**
 * What happened to a script's transaction, in words that are true whatever ran: sqlgate knows what
 * became of its own transaction, not what a script that manages its own transactions committed.
 */
export function transactionOutcome(outcome: RunOutcome): string | undefined {
  if (outcome.state === 'running') return undefined;
  if (outcome.transactionUsed === true) {
    return outcome.rolledBack
      ? 'Transaction rolled back: nothing was kept'
      : 'Transaction committed';
  }
  if (outcome.transactionUsed === false) {
    const ran =
      'No transaction added: the statements ran as written, and what they committed stays';
    return outcome.rolledBack ? `${ran}; the transaction left open was rolled back` : ran;
  }
  if (outcome.rolledBack) return 'Rolled back: the open transaction was not committed';
  return undefined;
}

/**
 * After Cancel, the statement that was running when the answer stopped is the one the cancel
 * stopped: it reads Cancelled, with PostgreSQL's 57014 when the answer had it, else the code the
 * run's cancel gave (sqlgate's REQUEST_CANCELLED, or none).
 */
export function cancelUnfinished(run: RunResult): void {
  const outcome = run.outcome.error;
  for (const statement of run.statements) {
    if (statement.state !== 'running') continue;
    statement.state = 'cancelled';
    statement.error = outcome ?? { message: 'Stopped by Cancel before it ended' };
  }
}

/** Marks the statements that never got their end when the answer stopped (cancelled, cut). */
export function closeUnfinished(run: RunResult): void {
  for (const statement of run.statements) {
    if (statement.state === 'running') statement.state = 'incomplete';
  }
}

/**
 * Row text a run keeps, in characters (about twice that in bytes of memory): past it, rows are
 * dropped and the statement says so, so that a huge result cannot take the browser tab down.
 */
export const MAX_KEPT_ROW_CHARACTERS = 200_000_000;

export function isRowLine(line: string): boolean {
  return line.startsWith('{"row":');
}

/** Counts the row text a run keeps; marks the statement whose rows it stops keeping. */
export class RowBudget {
  private used = 0;

  constructor(private readonly limit: number) {}

  keep(run: RunResult, line: string): boolean {
    this.used += line.length;
    if (this.used <= this.limit) return true;
    const statement = run.statements[run.statements.length - 1];
    if (statement) statement.droppedByConsole = true;
    return false;
  }
}
