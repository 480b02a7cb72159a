/**
 * The typed requests the use cases take (docs/interface.md describes their HTTP bodies); reading a
 * body into one is the transport's job, a library caller builds them in code.
 */
import type { RequestError } from './errors';
import type { ConnectionTarget, RowMode } from './ports/connections';

export type IsolationLevel =
  'read uncommitted' | 'read committed' | 'repeatable read' | 'serializable';

/**
 * Per-request cache wish: off, or on with the server's TTL or one of its own (`ttlMs`), and how
 * long after that a stale entry may still be served while it is refreshed (`swrMs`).
 */
export type CacheRequest = false | { ttlMs?: number; swrMs?: number };

export interface QueryOptions {
  params?: unknown[];
  timeoutMs?: number;
  maxRows?: number;
  rowMode: RowMode;
  readOnly: boolean;
  dryRun: boolean;
  /** Absent: the server's default applies. */
  cache?: CacheRequest;
  isolationLevel?: IsolationLevel;
  /** The transaction sqlgate opens is DEFERRABLE (it matters only when SERIALIZABLE and READ ONLY). */
  deferrable?: boolean;
}

/**
 * Who a request runs as when the server holds the credentials (docs/decisions.md 12): the role and
 * rules of an API key or a JWT. Absent: the statements run as the target's login, as sent.
 */
export interface RequestIdentity {
  /** The role the statements run as (SET LOCAL ROLE); absent: the login's own. */
  role?: string;
  /** JSON text set as `request.jwt.claims` for the statements (a JWT's claims). */
  claims?: string;
  /** The statements the credentials may run: reads, reads and data changes, or any. */
  may: 'read' | 'write' | 'all';
  /** Rows per statement: the default, and the most a request may ask for. */
  maxRows?: number;
  /** Milliseconds a request may run: the default, and the most a request may ask for. */
  timeoutMs?: number;
}

/** `maxRows` of a request that asks for no row limit (POST /sql): an identity's still applies. */
export const UNLIMITED_ROWS = Number.MAX_SAFE_INTEGER;

/**
 * How a session opened with credentials lets its requests in (docs/decisions.md 12): the session
 * id is their credential, but the credentials' rate still counts them, and the session holds one
 * of their concurrency slots until it ends.
 */
export interface SessionAdmission {
  /** Refuses a request of the session (its rate used up), or lets it in. */
  eachRequest(): Promise<RequestError | undefined>;
  /** The session ended: what it held is given back. */
  ended(): void;
}

/** One statement of a batch and the values bound to its $1, $2, …. */
export interface BatchStatement {
  sql: string;
  params?: unknown[];
}

/** A request to run SQL (POST /api/query, and the request part of POST /api/copy). */
export interface QueryRequest {
  target: ConnectionTarget;
  /**
   * SQL text of one or more statements; or a batch: each text one statement with its own values,
   * all run in one transaction of the service's own, whatever they are (`options.params` is then
   * absent).
   */
  sql: string | readonly BatchStatement[];
  options: QueryOptions;
  /** Who the statements run as; absent: the target's login. */
  identity?: RequestIdentity;
  /**
   * What the caller should know of how the request was read (a body's unknown fields); every
   * answer carries them. Absent when there is none.
   */
  warnings?: string[];
}

/** A request run in a session (POST /api/sessions/{id}/query): the session decides the target. */
export type SessionQuery = Omit<QueryRequest, 'target' | 'sql' | 'identity'> & { sql: string };

/** A session to open (POST /api/sessions): where it connects, and for how long it may stay idle. */
export interface SessionOpenRequest {
  target: ConnectionTarget;
  /** Who the session's statements run as, set when it opens; absent: the target's login. */
  identity?: RequestIdentity;
  /** How its requests are let in, when credentials opened it. */
  admission?: SessionAdmission;
  /** At most the service's `sessionLimits.idleTimeoutMs`, which also applies when absent. */
  idleTimeoutMs?: number;
  warnings?: string[];
}

/** A target to check (POST /api/test-connection). */
export interface ConnectionCheckRequest {
  target: ConnectionTarget;
  warnings?: string[];
}

/**
 * The typed request, or the RequestError that refused its body: the use case answers a refusal
 * where it would use the request, as any request it refuses.
 */
export type RequestOrRefusal<T> = T | RequestError;
