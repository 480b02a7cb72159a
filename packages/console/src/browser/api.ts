/**
 * The console's calls to sqlgate: same origin, JSON bodies sent as application/json, paths relative
 * to the page so the console works wherever the service is mounted. Each call takes the headers of
 * the form's credentials (request-fields.ts `credentialHeaders`): a key or token goes in
 * `Authorization`, never in a body or a URL.
 */
import { NdjsonLines } from './ndjson';
import {
  applyLine,
  asCancelled,
  cancelUnfinished,
  closeUnfinished,
  emptyRun,
  isRowLine,
  MAX_KEPT_ROW_CHARACTERS,
  RowBudget,
  runOfJsonAnswer,
  withRetryAfter,
  type RunResult,
} from './results';

export interface RunHandle {
  /** Settles with the run when the answer is complete, cut or cancelled. */
  done: Promise<RunResult>;
  /** Stops the run: asks sqlgate to cancel the statements, then drops the connection. */
  cancel(): Promise<void>;
}

export interface RunOptions {
  body: Record<string, unknown>;
  /** The credentials' headers, sent with the run and with its cancel. */
  headers: Record<string, string>;
  /** Streams NDJSON (any size, row by row) unless the run uses the cache (JSON only). */
  stream: boolean;
  /** Called as rows arrive, at most once per animation frame. */
  onProgress(run: RunResult): void;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** How long the console waits for the cancel endpoint, then for the cancelled request's answer. */
const CANCEL_WAIT_MS = 1500;

/** What a cancelled run says when sqlgate's answer about it never came. */
const OUTCOME_UNKNOWN = {
  message: 'The answer ended before sqlgate said what became of the statements: check the database',
};

/** What one run's reader and its Cancel button share. */
interface RunControl {
  requestId: string;
  aborter: AbortController;
  /** Cancel was pressed: rows read after it are dropped, the lines that say what ran are not. */
  cancelled: boolean;
}

/** Runs SQL; the answer is read as it arrives. */
export function runQuery(options: RunOptions): RunHandle {
  const control: RunControl = {
    requestId: `console-${crypto.randomUUID()}`,
    aborter: new AbortController(),
    cancelled: false,
  };
  const done = readRun(options, control).catch((error: unknown) => {
    const run = emptyRun();
    run.outcome = control.cancelled
      ? { state: 'cancelled', error: OUTCOME_UNKNOWN }
      : { state: 'failed', error: { message: `sqlgate could not be reached: ${String(error)}` } };
    return run;
  });
  return {
    done,
    async cancel() {
      control.cancelled = true;
      const answer = await cancelRequest(control.requestId, options.body, options.headers);
      // The cancelled request answers by itself and says what ran and what became of the
      // transaction (a 409 before any output, an error line and done in a stream): wait for that
      // briefly. Without it, closing the connection cancels too (sqlgate cancels the statement of a
      // caller that leaves), and the run says its outcome is unknown.
      if (answer?.status === 200) await Promise.race([done, delay(CANCEL_WAIT_MS)]);
      control.aborter.abort();
    },
  };
}

/**
 * Asks sqlgate to cancel the request `requestId` sent with `body` and `headers`; undefined when no
 * answer came within CANCEL_WAIT_MS.
 */
export async function cancelRequest(
  requestId: string,
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<JsonAnswer | undefined> {
  // The login that ran the request (or the connection and key that did) names whose request it
  // is; undefined fields are left out of the JSON.
  const { host, port, user, database, password, connection } = body;
  const cancelled = postJson(
    `api/requests/${encodeURIComponent(requestId)}/cancel`,
    { host, port, user, database, password, connection },
    headers,
  ).catch(() => undefined);
  return Promise.race([cancelled, delay(CANCEL_WAIT_MS).then(() => undefined)]);
}

async function readRun(options: RunOptions, control: RunControl): Promise<RunResult> {
  const { signal } = control.aborter;
  const response = await fetch('api/query', {
    method: 'POST',
    headers: {
      ...options.headers,
      ...JSON_HEADERS,
      accept: options.stream ? 'application/x-ndjson' : 'application/json',
      'x-request-id': control.requestId,
    },
    body: JSON.stringify(options.body),
    signal,
  });
  const type = response.headers.get('content-type') ?? '';
  if (
    response.ok &&
    !type.startsWith('application/json') &&
    !type.startsWith('application/x-ndjson')
  ) {
    return await copyDataRun(response);
  }
  if (!type.startsWith('application/x-ndjson') || !response.body) {
    const run = withRetryAfter(
      runOfJsonAnswer(response.status, await response.json().catch(() => undefined)),
      response.headers.get('retry-after'),
    );
    if (control.cancelled) asCancelled(run);
    return run;
  }
  const run = emptyRun();
  run.streamed = true;
  const lines = new NdjsonLines();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const budget = new RowBudget(MAX_KEPT_ROW_CHARACTERS);
  let frame = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const line of lines.push(value)) {
        // After Cancel, rows still on their way are dropped; the lines that say what ran are not.
        if (isRowLine(line) && (control.cancelled || !budget.keep(run, line))) continue;
        applyLine(run, line);
      }
      if (frame === 0) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          options.onProgress(run);
        });
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    if (frame !== 0) cancelAnimationFrame(frame);
  }
  if (run.outcome.state === 'running') {
    run.outcome = control.cancelled
      ? { ...run.outcome, state: 'cancelled', error: OUTCOME_UNKNOWN }
      : {
          ...run.outcome,
          state: 'cut',
          error: { message: 'The answer was cut before its end: what is shown may be incomplete' },
        };
  }
  if (control.cancelled) {
    asCancelled(run);
    cancelUnfinished(run);
  }
  closeUnfinished(run);
  return run;
}

/** The answer of a lone COPY ... TO STDOUT: its data, whatever was asked for. */
async function copyDataRun(response: Response): Promise<RunResult> {
  const run = emptyRun();
  try {
    run.copyData = await response.blob();
    run.outcome = { state: 'succeeded' };
  } catch {
    run.outcome = {
      state: 'cut',
      error: { message: 'The COPY data was cut after it began: the COPY failed partway' },
    };
  }
  return run;
}

export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
  /** The answer's Retry-After header, if any. */
  retryAfter?: string;
}

export async function postJson(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<JsonAnswer> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { ...headers, ...JSON_HEADERS },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return jsonAnswerOf(response);
}

async function jsonAnswerOf(response: Response): Promise<JsonAnswer> {
  const retryAfter = response.headers.get('retry-after');
  return {
    status: response.status,
    body: await jsonOf(response),
    ...(retryAfter === null ? {} : { retryAfter }),
  };
}

/** GET or DELETE of a statistics endpoint; `token` answers STATS_TOKEN. */
export async function statsCall(
  path: string,
  token: string,
  method: 'GET' | 'DELETE' = 'GET',
): Promise<JsonAnswer> {
  const response = await fetch(path, {
    method,
    headers: token === '' ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await jsonOf(response) };
}

/**
 * One statement's rows as CSV, from sqlgate's CSV stream: every value as PostgreSQL's text. The
 * statement runs again, read-only, so exporting can never change data.
 */
export async function exportCsv(
  body: Record<string, unknown>,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Blob | JsonAnswer> {
  const response = await fetch('api/query', {
    signal,
    method: 'POST',
    headers: { ...headers, ...JSON_HEADERS, accept: 'text/csv' },
    body: JSON.stringify({ ...body, readOnly: true, dryRun: undefined, cache: undefined }),
  });
  if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('text/csv')) {
    return jsonAnswerOf(response);
  }
  return await response.blob();
}

async function jsonOf(response: Response): Promise<Record<string, unknown>> {
  try {
    const body: unknown = await response.json();
    return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  } catch {
    return { error: `HTTP ${response.status}` };
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
