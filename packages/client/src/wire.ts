/**
 * The requests the client sends to sqlgate (its docs/interface.md, "POST /sql" and "Sessions"):
 * one statement or a batch to POST /sql, in PostgreSQL's text, on the target of a connection
 * string or in a session; and the session's opening and end.
 */
import { errorOfAnswer, SqlgateError } from './errors';

/** A column as sqlgate describes it: its name and its type's OID, by which its values are read. */
export interface Field {
  name: string;
  dataTypeID: number;
  tableID: number;
  columnID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: string;
}

/** One statement's answer, its values still PostgreSQL's text. */
export interface TextResult {
  fields: Field[];
  rows: (string | null)[][];
  command: string;
  rowCount: number | null;
}

/** Where statements run: the connection string's target, or a session on it. */
export type Place = { connectionString: string } | { sessionId: string };

export interface Wire {
  /** sqlgate's base URL, without a trailing slash. */
  url: string;
  fetch: typeof fetch;
}

/** The wire to sqlgate at `url` (a trailing slash dropped), through `fetch` or the global one. */
export function wireTo(url: string, givenFetch?: typeof fetch): Wire {
  return {
    url: url.replace(/\/+$/, ''),
    fetch: givenFetch ?? ((input, init) => globalThis.fetch(input, init)),
  };
}

/** A statement as POST /sql takes it: its values already text (parameters.ts). */
export interface Statement {
  query: string;
  params: (string | null)[];
}

/** Neon-Batch-* headers: how a batch's transaction begins. */
export interface BatchOptions {
  isolationLevel?: 'ReadUncommitted' | 'ReadCommitted' | 'RepeatableRead' | 'Serializable';
  readOnly?: boolean;
  deferrable?: boolean;
}

function placeHeaders(place: Place): Record<string, string> {
  return 'sessionId' in place
    ? { 'Sqlgate-Session': place.sessionId }
    : { 'Neon-Connection-String': place.connectionString };
}

async function send(
  wire: Wire,
  path: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal?: AbortSignal;
    keepalive?: boolean;
  },
): Promise<unknown> {
  let response: Response;
  try {
    response = await wire.fetch(`${wire.url}${path}`, init);
  } catch (error) {
    if (init.signal?.aborted) throw init.signal.reason;
    throw new SqlgateError(`sqlgate could not be reached at ${wire.url}`, undefined, {
      cause: error,
    });
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): kept as text for the error.
  }
  if (!response.ok) throw errorOfAnswer(response.status, body);
  return body;
}

const JSON_TEXT = { 'content-type': 'application/json', 'Neon-Raw-Text-Output': 'true' };

/** Runs one statement; its answer in text. */
export async function runStatement(
  wire: Wire,
  place: Place,
  statement: Statement,
  signal?: AbortSignal,
): Promise<TextResult> {
  return (await send(wire, '/sql', {
    method: 'POST',
    headers: { ...JSON_TEXT, 'Neon-Array-Mode': 'true', ...placeHeaders(place) },
    body: JSON.stringify(statement),
    ...(signal ? { signal } : {}),
  })) as TextResult;
}

/**
 * Runs one statement with its rows streamed: the response, whose body is sqlgate's NDJSON lines
 * (statement, row…, end, error?, done), read as the caller takes the rows.
 */
export async function streamStatement(
  wire: Wire,
  connectionString: string,
  statement: Statement,
  signal?: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  let response: Response;
  try {
    response = await wire.fetch(`${wire.url}/sql`, {
      method: 'POST',
      headers: {
        ...JSON_TEXT,
        'Neon-Array-Mode': 'true',
        'Neon-Connection-String': connectionString,
        accept: 'application/x-ndjson',
      },
      body: JSON.stringify(statement),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new SqlgateError(`sqlgate could not be reached at ${wire.url}`, undefined, {
      cause: error,
    });
  }
  const type = response.headers.get('content-type') ?? '';
  if (response.ok && type.startsWith('application/x-ndjson') && response.body) return response.body;
  // Refused or failed before its first row: a JSON answer, as without streaming.
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text for the error
  }
  throw errorOfAnswer(response.status, body);
}

/** Runs statements in order in one transaction; their answers in text. */
export async function runBatch(
  wire: Wire,
  connectionString: string,
  statements: Statement[],
  options: BatchOptions & { signal?: AbortSignal },
): Promise<TextResult[]> {
  const headers: Record<string, string> = {
    ...JSON_TEXT,
    'Neon-Array-Mode': 'true',
    'Neon-Connection-String': connectionString,
  };
  if (options.isolationLevel) headers['Neon-Batch-Isolation-Level'] = options.isolationLevel;
  if (options.readOnly) headers['Neon-Batch-Read-Only'] = 'true';
  if (options.deferrable) headers['Neon-Batch-Deferrable'] = 'true';
  const body = (await send(wire, '/sql', {
    method: 'POST',
    headers,
    body: JSON.stringify({ queries: statements }),
    ...(options.signal ? { signal: options.signal } : {}),
  })) as { results: TextResult[] };
  return body.results;
}

/** Opens a session on the connection string's target; its id. */
export async function openSession(
  wire: Wire,
  connectionString: string,
  signal?: AbortSignal,
): Promise<string> {
  const body = (await send(wire, '/api/sessions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Neon-Connection-String': connectionString },
    body: '{}',
    ...(signal ? { signal } : {}),
  })) as { sessionId: string };
  return body.sessionId;
}

/**
 * Ends a session: sqlgate rolls back a transaction it holds. `keepalive` lets the request outlive
 * a page that is going away.
 */
export async function closeSession(
  wire: Wire,
  sessionId: string,
  keepalive = false,
): Promise<void> {
  await send(wire, `/api/sessions/${encodeURIComponent(sessionId)}`, {
    method: 'DELETE',
    headers: {},
    ...(keepalive ? { keepalive: true } : {}),
    // A session already gone (expired, or closed by a shutdown) has nothing left to end.
  }).catch(() => undefined);
}
