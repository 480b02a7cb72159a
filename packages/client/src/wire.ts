/**
 * The requests the client sends to sqlgate (its docs/interface.md, "POST /sql" and "Sessions"):
 * one statement or a batch to POST /sql, in PostgreSQL's text, on a target (target.ts) or in a
 * session; and the session's opening and end.
 */
import { errorOfAnswer, SqlgateError } from './errors';
import { sessionOpening, sqlHeaders, type Target } from './target';

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

/** Where statements run: a target, or a session on it. */
export type Place = Target | { sessionId: string };

export interface Wire {
  /** sqlgate's base URL, without a trailing slash. */
  url: string;
  fetch: typeof fetch;
  /**
   * The last Sqlgate-Consistency-Token sqlgate answered with (a write on a connection with
   * replicas): sent with every later request, so that its reads see that write.
   */
  consistencyToken?: string;
}

const CONSISTENCY_TOKEN = 'Sqlgate-Consistency-Token';

/** `headers` with the wire's last consistency token, if it has one. */
function withToken(wire: Wire, headers: Record<string, string>): Record<string, string> {
  return wire.consistencyToken === undefined
    ? headers
    : { ...headers, [CONSISTENCY_TOKEN]: wire.consistencyToken };
}

/** Keeps the answer's consistency token, the newest write's, for the requests after it. */
function keepToken(wire: Wire, response: Response): void {
  const token = response.headers.get(CONSISTENCY_TOKEN);
  if (token) wire.consistencyToken = token;
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

function placeHeaders(place: Place): Promise<Record<string, string>> | Record<string, string> {
  return 'sessionId' in place ? { 'Sqlgate-Session': place.sessionId } : sqlHeaders(place);
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): kept as text for the error.
    return text;
  }
}

/** The error of a refused answer; a 429's Retry-After kept, for the caller to wait that long. */
async function refusal(response: Response): Promise<SqlgateError> {
  return errorOfAnswer(
    response.status,
    await bodyOf(response),
    response.headers.get('retry-after'),
  );
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
    response = await wire.fetch(`${wire.url}${path}`, {
      ...init,
      headers: withToken(wire, init.headers),
    });
  } catch (error) {
    if (init.signal?.aborted) throw init.signal.reason;
    throw new SqlgateError(`sqlgate could not be reached at ${wire.url}`, undefined, {
      cause: error,
    });
  }
  keepToken(wire, response);
  if (!response.ok) throw await refusal(response);
  return bodyOf(response);
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
    headers: { ...JSON_TEXT, 'Neon-Array-Mode': 'true', ...(await placeHeaders(place)) },
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
  target: Target,
  statement: Statement,
  signal?: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const targetHeaders = await sqlHeaders(target);
  let response: Response;
  try {
    response = await wire.fetch(`${wire.url}/sql`, {
      method: 'POST',
      headers: withToken(wire, {
        ...JSON_TEXT,
        'Neon-Array-Mode': 'true',
        ...targetHeaders,
        accept: 'application/x-ndjson',
      }),
      body: JSON.stringify(statement),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new SqlgateError(`sqlgate could not be reached at ${wire.url}`, undefined, {
      cause: error,
    });
  }
  keepToken(wire, response);
  const type = response.headers.get('content-type') ?? '';
  if (response.ok && type.startsWith('application/x-ndjson') && response.body) return response.body;
  // Refused or failed before its first row: a JSON answer, as without streaming.
  throw await refusal(response);
}

/** Runs statements in order in one transaction; their answers in text. */
export async function runBatch(
  wire: Wire,
  target: Target,
  statements: Statement[],
  options: BatchOptions & { signal?: AbortSignal },
): Promise<TextResult[]> {
  const headers: Record<string, string> = {
    ...JSON_TEXT,
    'Neon-Array-Mode': 'true',
    ...(await sqlHeaders(target)),
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

/** Opens a session on `target`; its id. */
export async function openSession(
  wire: Wire,
  target: Target,
  signal?: AbortSignal,
): Promise<string> {
  const { headers, body: opening } = await sessionOpening(target);
  const body = (await send(wire, '/api/sessions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: opening,
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
