/**
 * Server-side access (docs/decisions.md 12): who sent a request, which named connection it may
 * run on, as which role, and whether its key's limits let it in now. Decided before its body is
 * read into a request and before anything connects, in this order:
 * 1. no `Authorization` and no `connection`: the SPEC form, unless ALLOW_DIRECT_CONNECTIONS is off;
 * 2. the key or token is checked (401 UNAUTHORIZED);
 * 3. the connection must be one its rules name, and an allowlisted key's SQL one of its queries
 *    (403 FORBIDDEN);
 * 4. its rate and concurrency (429 RATE_LIMITED, with Retry-After).
 * A session opened so holds one concurrency slot until it ends, and each of its requests takes a
 * token of the rate; an allowlist cannot hold a session to its queries, so it opens none.
 * A refusal is a RequestError that the endpoint hands its use case, which answers it as any
 * refused request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  codedError,
  ErrorCodes,
  RequestError,
  retryAfterSeconds,
  SqlgateError,
  type ConcurrencySlot,
  type ConnectionTarget,
  type LimitStore,
  type QueryRequest,
  type RateRule,
  type RequestIdentity,
  type RequestOrRefusal,
  type SessionAdmission,
  type SessionOpenRequest,
} from '@sqlgate/core';
import { answerHeader } from '../answer-headers';
import { requestOrRefusal, type ConfiguredTargets } from '../contract';
import type { Caller } from './credentials';

/** What an admitted request runs with. */
export interface Admission {
  /** The targets its body may use: the server's default, or the named connections. */
  targets: ConfiguredTargets | undefined;
  /** Who its statements run as, within which caps; absent for the SPEC form. */
  identity?: RequestIdentity;
  /** Who it runs for (`key:<id>`, `jwt:<sub>`): only the same may cancel it by id. */
  owner?: string;
  /** How a session it opens lets its requests in (`admit(..., 'session')`). */
  session?: SessionAdmission;
  /** The body, with the SQL text of an allowlisted `queryId` in place of the id. */
  body: unknown;
}

/** What is admitted: one request, or a session whose requests come later. */
export type AdmissionPurpose = 'request' | 'session';

/** Why a request was refused, for the metrics and the log (never a secret). */
export type RefusalReason = 'unauthorized' | 'forbidden' | 'rate_limited' | 'concurrency_limited';

export interface AccessOptions {
  /** CONFIG_FILE's connections by name, their pools named by it (ConnectionTarget.name). */
  connectionTargets: ReadonlyMap<string, ConnectionTarget>;
  /** ALLOW_DIRECT_CONNECTIONS: requests may name a target with its own credentials (the SPEC form). */
  allowDirect: boolean;
  /** The server's default target (`sqlgate --demo`), for requests in the SPEC form. */
  defaultTargets: ConfiguredTargets | undefined;
  authenticate: (authorization: string | undefined) => Promise<Caller>;
  limits: LimitStore;
  /** Told of every refusal, with the key's id or the token's subject when known. */
  refused?: (reason: RefusalReason, callerId: string | undefined, requestId?: string) => void;
}

/** What an endpoint admits: the body's fields that decide access. */
interface AccessFields {
  connection?: unknown;
  sql?: unknown;
  queryId?: unknown;
}

export interface Access {
  /**
   * Admits the request `req` with `body`, or refuses it; at once when nothing needs checking. A
   * concurrency slot it takes is given back when `res` closes: the answer was sent, or its caller
   * went away.
   */
  admit(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    purpose?: AdmissionPurpose,
  ): RequestOrRefusal<Admission> | Promise<RequestOrRefusal<Admission>>;
  /**
   * Every target an admitted body may name, to read such a body again where admission already
   * happened (a cancel tried by the other workers of WORKERS=n).
   */
  readonly targets: ConfiguredTargets | undefined;
}

/** Access with server-side credentials (CONFIG_FILE), and the SPEC form unless turned off. */
export function createAccess(options: AccessOptions): Access {
  return {
    targets: { ...options.defaultTargets, connections: options.connectionTargets },
    admit: (req, res, body, purpose = 'request') =>
      admit(options, req, res, body, purpose).catch((error: unknown) => {
        if (error instanceof RequestError) return error;
        throw error;
      }),
  };
}

/**
 * Access without CONFIG_FILE: every request names its own target (or uses the default one), and
 * `Authorization` means nothing to the query endpoints, as before keys existed.
 */
export function directAccess(defaultTargets?: ConfiguredTargets): Access {
  return {
    targets: defaultTargets,
    admit: (_req, _res, body) => ({ targets: defaultTargets, body }),
  };
}

/**
 * A body read as admitted: on the admitted target, for its owner, as the credentials' identity
 * (core holds it to their caps), and a session with its admission.
 */
export function readAdmitted<T extends QueryRequest | SessionOpenRequest>(
  admission: RequestOrRefusal<Admission>,
  read: (body: unknown, targets: ConfiguredTargets | undefined) => T,
): RequestOrRefusal<T> {
  if (admission instanceof RequestError) return admission;
  const read_ = requestOrRefusal(() => {
    const request = read(admission.body, admission.targets);
    if (admission.identity === undefined) return request;
    request.identity = admission.identity;
    request.target = ownedTarget(request.target, admission);
    if (admission.session && !('options' in request)) request.admission = admission.session;
    return request;
  });
  // A session refused while its body was read holds nothing.
  if (read_ instanceof RequestError) admission.session?.ended();
  return read_;
}

/** The target with its owner, when credentials admitted it. */
export function ownedTarget(target: ConnectionTarget, admission: Admission): ConnectionTarget {
  return admission.owner === undefined ? target : { ...target, owner: admission.owner };
}

async function admit(
  options: AccessOptions,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  purpose: AdmissionPurpose,
): Promise<Admission> {
  // Node keeps the first of two; a proxy may check the last. Neither is guessed.
  if ((req.headersDistinct.authorization?.length ?? 0) > 1) {
    throw new RequestError(ErrorCodes.INVALID_REQUEST, 'Send one Authorization header');
  }
  const authorization = req.headers.authorization;
  const fields = fieldsOf(body);
  if (authorization === undefined && fields.connection === undefined) {
    if (!options.allowDirect) {
      throw refusal(
        options,
        res,
        'unauthorized',
        undefined,
        unauthorized(
          "This server runs only named connections: send 'connection' with 'Authorization: Bearer <key or token>'",
        ),
      );
    }
    return { targets: options.defaultTargets, body };
  }
  const caller = await authenticated(options, res, authorization);
  refuseForeignConnection(options, res, caller, fields.connection);
  const admitted: Admission = {
    targets: { connections: options.connectionTargets },
    identity: identityOf(caller),
    owner: caller.limitKey,
    body,
  };
  if (purpose === 'session') {
    refuseAllowlistedSession(options, res, caller);
    admitted.session = await sessionAdmission(options, res, caller);
    return admitted;
  }
  admitted.body = allowedBody(options, res, caller, body, fields);
  await takeLimits(options, res, caller);
  return admitted;
}

/** An allowlist holds requests to its queries; a session's requests could run anything. */
function refuseAllowlistedSession(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
): void {
  if (typeof caller.rules.allow === 'string') return;
  throw refusal(
    options,
    res,
    'forbidden',
    caller.id,
    forbidden('These credentials run only the queries of their allowlist, which opens no session'),
  );
}

/**
 * A session's share of the caller's limits: a token of the rate now and one for each of its
 * requests, and one concurrency slot while it is open.
 */
async function sessionAdmission(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
): Promise<SessionAdmission> {
  const { rate } = caller.rules;
  const slot = await takeRateAndSlot(options, res, caller);
  return {
    eachRequest: async () => {
      if (!rate) return undefined;
      const taken = await options.limits.take(`rate:${caller.limitKey}`, rate);
      if (taken.ok) return undefined;
      options.refused?.('rate_limited', caller.id);
      return rateLimited('rate_limited', taken.retryAfterMs);
    },
    ended: () => slot?.release(),
  };
}

function fieldsOf(body: unknown): AccessFields {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as AccessFields)
    : {};
}

// Refusals name their code in the body (as the session and cancel endpoints' do), so that
// programs need not read the message.
function unauthorized(message: string): RequestError {
  return codedError(ErrorCodes.UNAUTHORIZED, message);
}

function forbidden(message: string): RequestError {
  return codedError(ErrorCodes.FORBIDDEN, message);
}

/** Tells the metrics and the log, sets the headers the status asks for, and gives the error back. */
function refusal(
  options: AccessOptions,
  res: ServerResponse,
  reason: RefusalReason,
  callerId: string | undefined,
  error: RequestError,
): RequestError {
  options.refused?.(reason, callerId, answerHeader(res, 'X-Request-Id'));
  if (reason === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  return error;
}

async function authenticated(
  options: AccessOptions,
  res: ServerResponse,
  authorization: string | undefined,
): Promise<Caller> {
  try {
    return await options.authenticate(authorization);
  } catch (error) {
    if (error instanceof SqlgateError && error.code === ErrorCodes.UNAUTHORIZED) {
      throw refusal(options, res, 'unauthorized', undefined, unauthorized(error.message));
    }
    throw error;
  }
}

/**
 * Refuses a connection the caller's rules do not name. A name the server does not hold is refused
 * alike: the answer does not tell which names exist.
 */
function refuseForeignConnection(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
  name: unknown,
): void {
  if (typeof name !== 'string' || name === '') {
    throw new RequestError(
      ErrorCodes.MISSING_FIELDS,
      "A request with an API key or a token names its target with 'connection'",
      { missing: ['connection'] },
    );
  }
  if (!options.connectionTargets.has(name) || !caller.rules.connections.has(name)) {
    throw refusal(
      options,
      res,
      'forbidden',
      caller.id,
      forbidden(`These credentials may not use the connection '${name}'`),
    );
  }
}

/**
 * The body an allowlisted key may run: its SQL one of the key's queries as written, or a
 * `queryId` naming one (then replaced by its text). Keys without an allowlist take no queryId.
 */
function allowedBody(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
  body: unknown,
  fields: AccessFields,
): unknown {
  const { allow } = caller.rules;
  const { queryId, sql } = fields;
  if (typeof allow === 'string') {
    if (queryId !== undefined) {
      throw new RequestError(
        ErrorCodes.INVALID_REQUEST,
        "'queryId' names a query of an allowlist, and these credentials have none: send 'sql'",
      );
    }
    return body;
  }
  if (queryId !== undefined) {
    if (sql !== undefined) {
      throw new RequestError(ErrorCodes.INVALID_REQUEST, "Send 'sql' or 'queryId', not both");
    }
    const text = typeof queryId === 'string' ? allow.byId.get(queryId) : undefined;
    if (text === undefined) throw outsideAllowlist(options, res, caller, 'no query has this id');
    const { queryId: _id, ...rest } = body as Record<string, unknown>;
    return { ...rest, sql: text };
  }
  // A missing sql is the reader's to refuse (MISSING_FIELDS), with the body's other mistakes. A
  // list is a batch of POST /sql: each of its texts must be one of the queries.
  const texts = Array.isArray(sql) ? sql : [sql];
  const allowed = (text: unknown) =>
    text === undefined || text === '' || (typeof text === 'string' && allow.queries.has(text));
  if (!texts.every(allowed)) {
    throw outsideAllowlist(options, res, caller, 'this SQL is not one of them');
  }
  return body;
}

function outsideAllowlist(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
  why: string,
): RequestError {
  const message = `These credentials run only the queries of their allowlist, and ${why}`;
  return refusal(options, res, 'forbidden', caller.id, forbidden(message));
}

/** Takes a token of the caller's rate and a slot of its concurrency, given back when `res` closes. */
async function takeLimits(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
): Promise<void> {
  const slot = await takeRateAndSlot(options, res, caller);
  if (slot === undefined) return;
  if (res.closed) slot.release();
  else res.once('close', () => slot.release());
}

/** A token of the caller's rate, and a slot of its concurrency when it has one. */
async function takeRateAndSlot(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
): Promise<ConcurrencySlot | undefined> {
  const { rate, concurrency } = caller.rules;
  if (rate) await takeRate(options, res, caller);
  return concurrency === undefined ? undefined : enterSlot(options, res, caller, concurrency);
}

async function takeRate(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
): Promise<void> {
  const rate = caller.rules.rate as RateRule;
  const taken = await options.limits.take(`rate:${caller.limitKey}`, rate);
  if (!taken.ok) throw limited(options, res, caller, 'rate_limited', taken.retryAfterMs);
}

async function enterSlot(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
  concurrency: number,
): Promise<ConcurrencySlot> {
  const entered = await options.limits.enter(`concurrency:${caller.limitKey}`, concurrency);
  if (!entered.ok) {
    throw limited(options, res, caller, 'concurrency_limited', entered.retryAfterMs);
  }
  return entered.slot;
}

function limited(
  options: AccessOptions,
  res: ServerResponse,
  caller: Caller,
  reason: 'rate_limited' | 'concurrency_limited',
  retryAfterMs: number,
): RequestError {
  const refused = rateLimited(reason, retryAfterMs);
  res.setHeader('Retry-After', String(refused.body['retryAfterSeconds']));
  return refusal(options, res, reason, caller.id, refused);
}

/** RATE_LIMITED, saying when to retry: whole seconds, at least one (docs/decisions.md 12). */
function rateLimited(
  reason: 'rate_limited' | 'concurrency_limited',
  retryAfterMs: number,
): RequestError {
  const seconds = retryAfterSeconds(retryAfterMs);
  const what = reason === 'rate_limited' ? 'rate' : 'number of requests at once';
  return new RequestError(
    ErrorCodes.RATE_LIMITED,
    `These credentials reached their ${what}; retry in ${seconds} s`,
    { code: ErrorCodes.RATE_LIMITED, retryAfterSeconds: seconds },
  );
}

function identityOf(caller: Caller): RequestIdentity {
  const { allow } = caller.rules;
  const may = typeof allow === 'string' ? allow : 'all';
  const identity: RequestIdentity = { may };
  if (caller.role !== undefined) identity.role = caller.role;
  const { maxRows, timeoutMs } = caller.rules;
  if (maxRows !== undefined) identity.maxRows = maxRows;
  if (timeoutMs !== undefined) identity.timeoutMs = timeoutMs;
  // A key's requests get claims too, `{"key": id, "role": ...}`: a policy reading
  // request.jwt.claims as JSON must never meet the empty text an earlier transaction left.
  identity.claims = JSON.stringify(
    caller.claims ?? {
      key: caller.id,
      ...(caller.role === undefined ? {} : { role: caller.role }),
    },
  );
  return identity;
}
