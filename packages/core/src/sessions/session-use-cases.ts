/** The session use cases (docs/decisions.md 10.26): open, run a request in, close, and cancel. */
import { ErrorCodes, RequestError, codedError } from '../errors';
import type { ExecutionContext } from '../execution/context';
import {
  errorResponse,
  withWarnings,
  type QueryResponse,
  type QueryResponseBody,
  type ServiceAnswer,
} from '../execution/response';
import type { RunningRequests } from '../execution/running-requests';
import type { Clock } from '../ports/clock';
import type { TargetPolicy } from '../ports/target-policy';
import type { QueryRequest, RequestOrRefusal, SessionOpenRequest, SessionQuery } from '../request';
import type { ExecuteOptions, QueryService, QueryServiceResponse } from '../service-types';
import { refuseIdleTimeout } from './idle-timeout';
import type { Session, SessionEnd } from './session';
import type { SessionRegistry } from './session-registry';
import { withFields } from '../with-fields';

/** POST /api/sessions succeeded. */
export interface SessionOpened {
  sessionId: string;
  /** When the session ends unless a request comes first (ISO 8601). */
  expiresAt: string;
  idleTimeoutMs: number;
  warnings?: string[];
}

/** What a session's answer says of it: whether it is still open, and its transaction. */
export type SessionState =
  | {
      status: 'open';
      transactionStatus: 'idle' | 'in-transaction' | 'failed';
      expiresAt: string;
    }
  | { status: 'closed'; reason: SessionEnd };

/** What the session use cases need of the service. */
export interface SessionUseCaseDeps {
  sessions: SessionRegistry;
  running: RunningRequests;
  clock: Clock;
  targetPolicy?: TargetPolicy;
  /** Runs a request in a session, as the service runs any request. */
  runInSession(
    request: RequestOrRefusal<QueryRequest>,
    options: ExecuteOptions,
    inSession: SessionRun,
  ): Promise<QueryServiceResponse>;
}

/** The session use cases, wired to the service's registry and to the way it runs any request. */
export function createSessionUseCases(
  deps: SessionUseCaseDeps,
): Pick<QueryService, 'openSession' | 'executeInSession' | 'closeSession' | 'cancelSessionQuery'> {
  return {
    openSession: (request, openOptions = {}) => openSession(deps, request, openOptions),
    executeInSession: (sessionId, query, executeOptions = {}) =>
      executeInSession(deps, sessionId, query, executeOptions),
    closeSession: (sessionId) => closeSession(deps, sessionId),
    cancelSessionQuery: (sessionId) => cancelSessionQuery(deps, sessionId),
  };
}

async function openSession(
  deps: SessionUseCaseDeps,
  request: RequestOrRefusal<SessionOpenRequest>,
  openOptions: Pick<ExecuteOptions, 'signal' | 'requestId'> = {},
): Promise<ServiceAnswer<SessionOpened>> {
  const registered = openOptions.requestId ? deps.running.add(openOptions.requestId) : undefined;
  try {
    if (request instanceof RequestError) throw request;
    if (request.idleTimeoutMs !== undefined) {
      refuseIdleTimeout(request.idleTimeoutMs, deps.sessions.limits.idleTimeoutMs);
    }
    if (registered) registered.request.target = request.target;
    const checked = (await deps.targetPolicy?.check(request.target)) ?? request.target;
    // The wait for the session's connection ends when the caller goes away or cancels.
    const opened = await deps.sessions.open(
      checked,
      request.target,
      request.idleTimeoutMs,
      openOptions.signal,
      registered?.request,
      request,
    );
    if (!opened.ok) {
      request.admission?.ended();
      const failure = registered?.request.cancelled
        ? codedError(
            ErrorCodes.REQUEST_CANCELLED,
            'The request was cancelled; no session was opened',
          )
        : opened.error;
      return withWarnings(errorResponse(failure, 0), request.warnings);
    }
    const session = opened.value;
    const answer: SessionOpened = {
      sessionId: session.id,
      expiresAt: new Date(session.expiresAt).toISOString(),
      idleTimeoutMs: session.idleTimeoutMs,
    };
    if (request.warnings) answer.warnings = request.warnings;
    return { body: answer };
  } catch (error) {
    if (!(request instanceof RequestError)) request.admission?.ended();
    return errorResponse(error, 0);
  } finally {
    registered?.done();
  }
}

async function executeInSession(
  deps: SessionUseCaseDeps,
  sessionId: string,
  query: RequestOrRefusal<SessionQuery>,
  executeOptions: ExecuteOptions = {},
): Promise<QueryServiceResponse> {
  const session = deps.sessions.find(sessionId);
  if (!session)
    return {
      ...sessionNotFound(deps.sessions.endReasonOf(sessionId)),
      timings: { poolWaitMs: 0, executionMs: 0 },
    };
  const refused = await session.admission?.eachRequest();
  if (refused) return { ...errorResponse(refused, 0), timings: { poolWaitMs: 0, executionMs: 0 } };
  // The statements run where the session is: its target is the request's.
  const request = query instanceof RequestError ? query : { ...query, target: session.requested };
  const ran = await deps.sessions.run(session, (attach) =>
    deps.runInSession(request, executeOptions, { session, attach }),
  );
  if (!ran) {
    const busy = errorResponse(
      codedError(
        ErrorCodes.SESSION_BUSY,
        'The session is running another request; a session runs one request at a time',
      ),
      0,
    );
    busy.body = { ...busy.body, session: stateOf(deps, session) } as QueryResponseBody;
    return { ...busy, timings: { poolWaitMs: 0, executionMs: 0 } };
  }
  const response = ran.value;
  response.body = withFields(response.body, {
    session: stateOf(deps, session),
  }) as QueryResponseBody;
  return response;
}

/** What an answer says of its session, as the session stands after the request. */
function stateOf(deps: SessionUseCaseDeps, session: Session): SessionState {
  if (session.ending || session.connection.broken) {
    return { status: 'closed', reason: session.endedBy ?? 'broken' };
  }
  const idleEnd = deps.clock.date().getTime() + session.idleTimeoutMs;
  return {
    status: 'open',
    transactionStatus: session.connection.transactionStatus(),
    expiresAt: new Date(Math.min(idleEnd, session.lifetimeEndsAt)).toISOString(),
  };
}

async function closeSession(
  deps: SessionUseCaseDeps,
  sessionId: string,
): Promise<ServiceAnswer<{ closed: true; rolledBack: boolean }>> {
  if (!deps.sessions.find(sessionId)) return sessionNotFound(deps.sessions.endReasonOf(sessionId));
  const closed = await deps.sessions.end(sessionId, 'closed');
  // Another close (or the session's expiry) won the race: it is closed all the same.
  return { body: { closed: true, rolledBack: closed?.rolledBack ?? false } };
}

function cancelSessionQuery(
  deps: SessionUseCaseDeps,
  sessionId: string,
): ServiceAnswer<{ cancelled: true }> {
  const session = deps.sessions.find(sessionId);
  if (!session) return sessionNotFound(deps.sessions.endReasonOf(sessionId));
  if (!session.cancelRunning()) {
    return errorResponse(
      codedError(ErrorCodes.REQUEST_NOT_FOUND, 'Nothing runs in this session'),
      0,
    );
  }
  return { body: { cancelled: true } };
}

/** A request of a session: the session, and how the request's context joins it (cancel, close). */
export interface SessionRun {
  session: Session;
  attach(context: ExecutionContext): void;
}

/** What a request naming an ended session is told, by why it ended. */
const SESSION_ENDED: Record<SessionEnd, string> = {
  closed: 'The session was closed (DELETE /api/sessions/{sessionId})',
  idle: 'The session ended after its idleTimeoutMs without a request; any transaction it held was rolled back',
  lifetime:
    'The session reached SESSION_MAX_LIFETIME_MS and ended; any transaction it held was rolled back',
  broken:
    'The session ended: its connection to the database was lost (a restart, a terminated backend); any transaction it held was rolled back by the server',
  shutdown: 'The session ended when the service shut down; any transaction it held was rolled back',
};

/** 404 for a session id, saying why when the session ended lately here. */
function sessionNotFound(reason: SessionEnd | undefined): QueryResponse {
  if (reason === undefined) {
    return errorResponse(
      codedError(
        ErrorCodes.SESSION_NOT_FOUND,
        'No open session has this id: it was closed, it expired, or another instance holds it',
      ),
      0,
    );
  }
  const { body, failure } = errorResponse(
    codedError(ErrorCodes.SESSION_NOT_FOUND, SESSION_ENDED[reason]),
    0,
  );
  return { body: { ...body, session: { status: 'closed', reason } } as QueryResponseBody, failure };
}
