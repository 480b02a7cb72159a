/**
 * The requests the console makes on its own behalf, beside the user's runs: the catalog for the
 * schema browser and the completion, and plans. Both go to the same sqlgate with the connection
 * form's target and credentials (request-fields.ts), as JSON answers, never through the result
 * cache; only a plan takes the form's `params`, when its statement has placeholders. The
 * catalog's queries are sent `readOnly`; a plan's request says itself whether it is read-only or a
 * dry run (plan.ts).
 */
import { cancelRequest, postJson, type JsonAnswer } from './api';
import { CATALOG_SQL, catalogOf, type Catalog } from './catalog';
import { errorInfoOf } from './results';
import { planOf, type ExplainRequest, type Plan } from './plan';
import {
  credentialHeaders,
  queryBody,
  type ConnectionForm,
  type OfferedConnection,
} from './request-fields';

/** Where the console's requests go and with what: the form as a body and headers. */
export interface RequestTarget {
  /** The connection and the run settings (timeout, rows, isolation), without SQL or options. */
  body: Record<string, unknown>;
  headers: Record<string, string>;
  /** The form's `params`, which an EXPLAIN of the one statement they belong to needs. */
  params?: unknown[];
  /** Names the connection and the credentials: the catalog cache's key. */
  key: string;
  /** The form's Read only: a plan that may write is then sent read-only, never as a dry run. */
  readOnly: boolean;
}

/** The target of `form`; throws FormError when the form cannot make a request. */
export function requestTarget(form: ConnectionForm, offered?: OfferedConnection): RequestTarget {
  // The cache is for the user's reads, and these requests set readOnly or dryRun themselves.
  const body = queryBody({ ...form, cache: '', readOnly: false, dryRun: false }, '', offered);
  const params = body.params as unknown[] | undefined;
  delete body.sql;
  delete body.params;
  const headers = credentialHeaders(form);
  const key = JSON.stringify([
    ...['host', 'port', 'user', 'database', 'password', 'connection'].map((field) => body[field]),
    headers,
  ]);
  return {
    body,
    headers,
    key,
    readOnly: form.readOnly,
    ...(params === undefined ? {} : { params }),
  };
}

/**
 * An answer's error as Run shows it: PostgreSQL's code and message (from an error object, or the
 * `cause` of sqlgate's sentence), then the hint when there is one.
 */
export function errorOf(answer: JsonAnswer): string {
  if (typeof answer.body.error !== 'string' && typeof answer.body.error !== 'object') {
    return `HTTP ${answer.status}`;
  }
  const error = errorInfoOf(answer.body);
  const message = `${error.code ? `${error.code}: ` : ''}${error.message}`;
  return error.hint ? `${message} (${error.hint})` : message;
}

type Rows = Record<string, unknown>[];

function rowsOf(result: unknown): Rows {
  const rows = (result as { rows?: unknown } | undefined)?.rows;
  return Array.isArray(rows) ? (rows as Rows) : [];
}

/** The first result cut by a limit, as the catalog tells it (catalog.ts `truncated`). */
export function catalogTruncation(results: unknown[]): Catalog['truncated'] {
  for (const result of results) {
    const { truncated, truncatedBy } = result as { truncated?: unknown; truncatedBy?: unknown };
    if (truncated !== true) continue;
    return { rows: rowsOf(result).length, by: truncatedBy === 'bytes' ? 'bytes' : 'rows' };
  }
  return undefined;
}

/**
 * Reads the catalog with the queries of CATALOG_SQL in one read-only request. The form's Max rows
 * is for the user's runs and is not sent; a key's or the server's limit may still cut an answer,
 * and the catalog then says so.
 */
export async function fetchCatalog(target: RequestTarget): Promise<Catalog> {
  const body: Record<string, unknown> = {
    ...target.body,
    sql: CATALOG_SQL,
    readOnly: true,
    rowMode: 'object',
  };
  delete body.maxRows;
  const answer = await postJson('api/query', body, target.headers);
  const results = answer.body.results;
  if (answer.status !== 200 || !Array.isArray(results)) throw new Error(errorOf(answer));
  const failed = results.find(
    (result): result is Record<string, unknown> =>
      (result as { error?: unknown }).error !== undefined,
  );
  if (failed) throw new Error(errorOf({ status: answer.status, body: failed }));
  const catalog = catalogOf(
    rowsOf(results[0]),
    rowsOf(results[1]),
    rowsOf(results[2]),
    rowsOf(results[3]),
  );
  const truncated = catalogTruncation(results);
  return truncated ? { ...catalog, truncated } : catalog;
}

export interface ExplainAnswer {
  plan: Plan;
  /** sqlgate said nothing the request did was kept. */
  rolledBack: boolean;
}

/** A plan's request under way: Cancel stops it as it stops a run (api.ts `cancelRequest`). */
export interface PlanRequest {
  done: Promise<ExplainAnswer>;
  cancel(): Promise<void>;
}

/**
 * The body of a plan's request. The form's params go only with a statement that has placeholders
 * (`$1`): they belong to it, and sent with one without, PostgreSQL refuses the bind (08P01).
 */
export function planBody(target: RequestTarget, request: ExplainRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { ...target.body, sql: request.sql, rowMode: 'array' };
  if (target.params !== undefined && /\$[1-9]/.test(request.sql)) body.params = target.params;
  if (request.readOnly) body.readOnly = true;
  if (request.dryRun) body.dryRun = true;
  return body;
}

/** Runs an EXPLAIN and reads its plan; `done` throws with the database's message when it fails. */
export function fetchPlan(target: RequestTarget, request: ExplainRequest): PlanRequest {
  const body = planBody(target, request);
  const requestId = `console-${crypto.randomUUID()}`;
  const aborter = new AbortController();
  return {
    done: readPlan(body, target.headers, requestId, aborter.signal),
    async cancel() {
      await cancelRequest(requestId, body, target.headers);
      aborter.abort();
    },
  };
}

async function readPlan(
  body: Record<string, unknown>,
  headers: Record<string, string>,
  requestId: string,
  signal: AbortSignal,
): Promise<ExplainAnswer> {
  const answer = await postJson(
    'api/query',
    body,
    { ...headers, 'x-request-id': requestId },
    signal,
  );
  if (answer.status !== 200) throw new Error(errorOf(answer));
  const value: unknown = (rowsOf(answer.body) as unknown as unknown[][])[0]?.[0];
  return { plan: planOf(value), rolledBack: answer.body.rolledBack === true };
}

/**
 * The catalog of each connection the page used, kept in memory for the page's life: the schema
 * browser shows it at once when the connection comes back, Refresh and a run with DDL reload it.
 */
export class CatalogCache {
  private readonly catalogs = new Map<string, Promise<Catalog>>();
  /** The connections whose catalog is being read. */
  private readonly pending = new Map<string, Promise<Catalog>>();

  /** Whether a read of the connection's catalog is under way. */
  reading(target: RequestTarget): boolean {
    return this.pending.has(target.key);
  }

  /** The connection's catalog: the one kept, else a new read (`reload`: always a new read). */
  get(target: RequestTarget, reload = false): Promise<Catalog> {
    let catalog = reload ? undefined : this.catalogs.get(target.key);
    if (!catalog) {
      catalog = fetchCatalog(target);
      this.catalogs.set(target.key, catalog);
      this.pending.set(target.key, catalog);
      const read = catalog;
      const settled = (): void => {
        if (this.pending.get(target.key) === read) this.pending.delete(target.key);
      };
      read.then(settled, settled);
      // A failed read is not kept: the next look tries again.
      catalog.catch(() => {
        if (this.catalogs.get(target.key) === catalog) this.catalogs.delete(target.key);
      });
    }
    return catalog;
  }

  /** Whether the connection's catalog was read (or is being read). */
  has(target: RequestTarget): boolean {
    return this.catalogs.has(target.key);
  }
}
