/**
 * The requests the console makes on its own behalf, beside the user's runs: the catalog for the
 * schema browser and the completion, and plans. Both go to the same sqlgate with the connection
 * form's target and credentials (request-fields.ts), as JSON answers, never through the result
 * cache; only a plan takes the form's `params`. The catalog's queries are sent `readOnly`; a plan's request
 * says itself whether it is read-only or a dry run (plan.ts).
 */
import { postJson, type JsonAnswer } from './api';
import { CATALOG_SQL, catalogOf, type Catalog } from './catalog';
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
  return { body, headers, key, ...(params === undefined ? {} : { params }) };
}

/** An answer's error message, with sqlgate's hint when it gave one. */
function errorOf(answer: JsonAnswer): string {
  const { error, cause } = answer.body;
  const hint = (cause as { hint?: unknown } | undefined)?.hint;
  const message = typeof error === 'string' ? error : `HTTP ${answer.status}`;
  return typeof hint === 'string' ? `${message} (${hint})` : message;
}

type Rows = Record<string, unknown>[];

function rowsOf(result: unknown): Rows {
  const rows = (result as { rows?: unknown } | undefined)?.rows;
  return Array.isArray(rows) ? (rows as Rows) : [];
}

/** Reads the catalog with the three queries of CATALOG_SQL in one read-only request. */
export async function fetchCatalog(target: RequestTarget): Promise<Catalog> {
  const answer = await postJson(
    'api/query',
    { ...target.body, sql: CATALOG_SQL, readOnly: true, rowMode: 'object' },
    target.headers,
  );
  const results = answer.body.results;
  if (answer.status !== 200 || !Array.isArray(results)) throw new Error(errorOf(answer));
  const failed = results.find(
    (result): result is { error: string } =>
      typeof (result as { error?: unknown }).error === 'string',
  );
  if (failed) throw new Error(failed.error);
  return catalogOf(rowsOf(results[0]), rowsOf(results[1]), rowsOf(results[2]));
}

export interface ExplainAnswer {
  plan: Plan;
  /** sqlgate said nothing the request did was kept. */
  rolledBack: boolean;
}

/** Runs an EXPLAIN and reads its plan; throws with the database's message when it fails. */
export async function fetchPlan(
  target: RequestTarget,
  request: ExplainRequest,
): Promise<ExplainAnswer> {
  const body: Record<string, unknown> = { ...target.body, sql: request.sql, rowMode: 'array' };
  if (target.params !== undefined) body.params = target.params;
  if (request.readOnly) body.readOnly = true;
  if (request.dryRun) body.dryRun = true;
  const answer = await postJson('api/query', body, target.headers);
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

  /** The connection's catalog: the one kept, else a new read (`reload`: always a new read). */
  get(target: RequestTarget, reload = false): Promise<Catalog> {
    let catalog = reload ? undefined : this.catalogs.get(target.key);
    if (!catalog) {
      catalog = fetchCatalog(target);
      this.catalogs.set(target.key, catalog);
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
