/**
 * The first step of a request: a request its transport refused is refused here, its target
 * checked, its SQL split into statements, and the statements checked against what the request may
 * hold. Throws what refuses the request.
 */
import { ErrorCodes, RequestError, SqlgateError } from '../errors';
import { isCopyFromStdin } from '../execution/copy-from';
import { capToIdentity, refuseBeyondIdentity, refuseUnusableRole } from '../identity';
import { ABORTED_BEFORE_START_MESSAGE } from '../execution/response';
import { loadParser, parserLoaded, type ParsedStatement } from '../parser';
import type { ConnectionTarget } from '../ports/connections';
import type { BatchStatement, QueryRequest, RequestOrRefusal } from '../request';
import type { Session } from '../sessions/session';
import { statementsForTarget } from '../statements-for-target';
import type { RequestRun } from './request-run';
import { routeRequest } from './route';

export interface PreparedRequest {
  request: QueryRequest;
  /** The target the policy checked (and may have pinned): where the statements run. */
  target: ConnectionTarget;
  statements: readonly ParsedStatement[];
  /** The session the request runs in, if it does. */
  session: Session | undefined;
  /** A batch's values, by statement index (QueryRequest.sql); undefined for SQL text. */
  batchParams: readonly (unknown[] | undefined)[] | undefined;
  /**
   * Where the request's cached results belong when it runs on a replica: its primary's target, so
   * that writes through the primary invalidate them (docs/decisions.md 13). Absent: `target`.
   */
  scopeTarget?: ConnectionTarget;
}

export async function prepareRequest(
  run: RequestRun,
  request: RequestOrRefusal<QueryRequest>,
): Promise<PreparedRequest> {
  const { parts, mode } = run;
  if (request instanceof RequestError) throw request;
  if (request.identity) refuseUnusableRole(request.identity);
  const session = mode.kind === 'session' ? mode.inSession.session : undefined;
  run.warnings = request.warnings;
  if (run.registered) run.registered.target = request.target;
  // docs/decisions.md 10.17: the target is checked before the SQL is parsed, so a refused
  // target costs no parsing. The policy may pin the address it checked (DNS rebinding). A
  // session's target was checked when it opened.
  const { targetPolicy } = parts.options;
  const target = session
    ? session.target
    : targetPolicy
      ? ((await targetPolicy.check(request.target)) ?? request.target)
      : request.target;
  run.target = target;
  const { sql } = request;
  const statements =
    typeof sql === 'string'
      ? await splitStatements(run, sql, target, session)
      : await splitBatch(run, sql, target, session);
  run.statements = statements;
  checkStatements(run, statements, request);
  const batchParams = typeof sql === 'string' ? undefined : sql.map((item) => item.params);
  return routeRequest(run, { request, target, statements, session, batchParams });
}

/**
 * A batch's statements, numbered in the batch's order: each text must hold exactly one, as
 * PostgreSQL's extended protocol requires of a statement with values.
 */
async function splitBatch(
  run: RequestRun,
  batch: readonly BatchStatement[],
  target: ConnectionTarget,
  session: Session | undefined,
): Promise<ParsedStatement[]> {
  const statements: ParsedStatement[] = [];
  for (const [index, item] of batch.entries()) {
    const split = await splitStatements(run, item.sql, target, session);
    if (split.length !== 1) {
      throw new RequestError(
        ErrorCodes.INVALID_REQUEST,
        `Each query of a batch must hold exactly one statement; query ${index} holds ${split.length}`,
        { statementIndex: index },
      );
    }
    const statement = split[0] as ParsedStatement;
    statement.index = index;
    statements.push(statement);
  }
  return statements;
}

/** The statements of `sql`, read as the target's settings say (statements-for-target.ts). */
async function splitStatements(
  run: RequestRun,
  sql: string,
  target: ConnectionTarget,
  session: Session | undefined,
): Promise<readonly ParsedStatement[]> {
  const { parts, executeOptions } = run;
  // Awaited only until loaded: each await of a settled promise still costs a turn.
  if (!parserLoaded()) await loadParser();
  const parseStarted = parts.clock.now();
  const splitting = statementsForTarget(sql, target, {
    parse: parts.parse,
    connections: session ? session.connection.provider : parts.connections,
    signal: executeOptions.signal,
  });
  const split = splitting instanceof Promise ? await splitting : splitting;
  executeOptions.observer?.parsed?.({
    startMs: parseStarted,
    endMs: parts.clock.now(),
    statements: split.ok ? split.value.length : 0,
  });
  if (split.ok) return split.value;
  // The caller went away while the connection that tells the setting was awaited.
  throw executeOptions.signal?.aborted
    ? new SqlgateError(ErrorCodes.REQUEST_ABORTED, ABORTED_BEFORE_START_MESSAGE)
    : split.error;
}

/** Refuses statements the request may not hold: none, too many, or not what its mode runs. */
function checkStatements(
  run: RequestRun,
  statements: readonly ParsedStatement[],
  request: QueryRequest,
): void {
  if (statements.length === 0) {
    throw new RequestError(ErrorCodes.NO_STATEMENTS, 'No valid SQL statements found');
  }
  const { maxStatements } = run.parts;
  if (statements.length > maxStatements) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `The SQL text holds ${statements.length} statements; at most ${maxStatements} are allowed`,
    );
  }
  if (run.executeOptions.oneStatement && statements.length !== 1) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `This answer format holds one statement; the SQL text holds ${statements.length}`,
    );
  }
  if (run.mode.kind === 'copy-from') refuseAsCopyFrom(statements, request);
  const identity =
    run.mode.kind === 'session' ? run.mode.inSession.session.identity : request.identity;
  if (identity) {
    refuseBeyondIdentity(statements, identity);
    capToIdentity(request.options, identity);
  }
}

/** POST /api/copy runs one COPY ... FROM STDIN, and no option a COPY would silently ignore. */
function refuseAsCopyFrom(statements: readonly ParsedStatement[], request: QueryRequest): void {
  if (statements.length !== 1 || !isCopyFromStdin(statements[0] as ParsedStatement)) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      'POST /api/copy runs exactly one COPY ... FROM STDIN statement',
    );
  }
  // A COPY commits by itself in autocommit.
  const { readOnly, dryRun, params } = request.options;
  const ignored = readOnly ? 'readOnly' : dryRun ? 'dryRun' : params ? 'params' : undefined;
  if (ignored) {
    throw new RequestError(
      ErrorCodes.INVALID_REQUEST,
      `'${ignored}' cannot be used with POST /api/copy`,
    );
  }
}
