/**
 * The use cases the adapters call: run a query request, check a connection, report pools.
 * Transport-neutral: the HTTP app only turns these results into status codes and JSON.
 */
import { ErrorCodes, RequestError } from './errors';
import { ExecutionContext, elapsed, type ExecutionSettings } from './execution/context';
import { executePlan } from './execution/execute';
import { planExecution } from './execution/plan';
import { errorResponse, shapeResponse, type QueryResponse } from './execution/response';
import { loadParser, parseSql } from './parser';
import { systemClock, type Clock } from './ports/clock';
import type { ConnectionCheck, ConnectionProvider, PoolStat } from './ports/connections';
import { missingFields, parseConnectionTarget, parseQueryRequest } from './request';

export interface QueryServiceOptions {
  connections: ConnectionProvider;
  clock?: Clock;
  /** Rows per statement when a request names no `maxRows` (MAX_ROWS). Default 10000. */
  defaultMaxRows?: number;
  /** Statements per request (MAX_STATEMENTS). Default 10000. */
  maxStatements?: number;
  /** Clean every connection after every request (SESSION_RESET=always). Default false. */
  alwaysResetSession?: boolean;
  /** Reads of one request running at once on the parallel path. Default 5. */
  maxParallelReads?: number;
}

export interface ExecuteOptions {
  /** Aborting cancels the statements still running in PostgreSQL. */
  signal?: AbortSignal;
}

/** Where the time of a request went, for a Server-Timing header. */
export interface QueryTimings {
  poolWaitMs: number;
  executionMs: number;
}

export interface QueryServiceResponse extends QueryResponse {
  timings: QueryTimings;
}

/** Outcome of a connection check: SPEC's test-connection, with DECISIONS' status rules. */
export type ConnectionCheckResponse =
  | { body: { success: true; message: 'Connection successful' } & ConnectionCheck }
  | { body: { success: false; error: { message: string; code: string } }; failure: QueryResponse['failure'] };

export interface QueryService {
  /** Runs a POST /api/query body. Expected failures are responses, never rejections. */
  execute(body: unknown, options?: ExecuteOptions): Promise<QueryServiceResponse>;
  /** Runs a POST /api/test-connection body: one connection outside the pools. */
  checkConnection(body: unknown): Promise<ConnectionCheckResponse>;
  /** SPEC PoolStat for every pool; touches no database. */
  poolStats(): PoolStat[];
  /** Ends every pool. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Builds the query service over injected ports.
 *
 * @example
 * const service = createQueryService({ connections: createPostgresConnections() });
 * const { body } = await service.execute({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test', sql: 'SELECT 1' });
 */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const { connections } = options;
  const clock = options.clock ?? systemClock;
  const maxStatements = options.maxStatements ?? 10_000;
  const settings: ExecutionSettings = {
    defaultMaxRows: options.defaultMaxRows ?? 10_000,
    alwaysResetSession: options.alwaysResetSession ?? false,
    maxParallelReads: options.maxParallelReads ?? 5,
  };
  let closing: Promise<void> | undefined;

  async function execute(body: unknown, executeOptions: ExecuteOptions = {}): Promise<QueryServiceResponse> {
    const started = clock.now();
    let context: ExecutionContext | undefined;
    try {
      const request = parseQueryRequest(body);
      await loadParser();
      const statements = parseSql(request.sql);
      if (statements.length === 0) {
        throw new RequestError(ErrorCodes.NO_STATEMENTS, 'No valid SQL statements found');
      }
      if (statements.length > maxStatements) {
        throw new RequestError(
          ErrorCodes.INVALID_REQUEST,
          `The SQL text holds ${statements.length} statements; at most ${maxStatements} are allowed`,
        );
      }
      const plan = planExecution(statements, request.options);
      context = new ExecutionContext(
        connections,
        request.target,
        request.options,
        settings,
        clock,
        executeOptions.signal,
      );
      const outcome = await executePlan(context, plan, statements);
      const executionMs = elapsed(clock, started);
      return { ...shapeResponse(plan, outcome, executionMs), timings: timings(context, executionMs) };
    } catch (error) {
      const executionMs = elapsed(clock, started);
      return { ...errorResponse(error, executionMs), timings: timings(context, executionMs) };
    }
  }

  async function checkConnection(body: unknown): Promise<ConnectionCheckResponse> {
    try {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new RequestError(ErrorCodes.INVALID_REQUEST, 'Request body must be a JSON object');
      }
      const fields = body as Record<string, unknown>;
      const missing = missingFields(fields, ['host', 'port', 'user']);
      if (missing.length > 0) {
        throw new RequestError(ErrorCodes.MISSING_FIELDS, 'Missing required fields', { missing });
      }
      const target = parseConnectionTarget(fields, { database: 'postgres' });
      const check = await connections.check(target);
      return { body: { success: true, message: 'Connection successful', ...check } };
    } catch (error) {
      const { body: errorBody, failure } = errorResponse(error, 0);
      const reported = errorBody.error;
      const message = typeof reported === 'string' ? reported : (reported as { message: string }).message;
      const code = typeof reported === 'string' ? (failure?.code ?? 'ERROR') : (reported as { code: string }).code;
      return { body: { success: false, error: { message, code } }, failure };
    }
  }

  function close(): Promise<void> {
    closing ??= connections.close();
    return closing;
  }

  return {
    execute,
    checkConnection,
    poolStats: () => connections.poolStats(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function timings(context: ExecutionContext | undefined, executionMs: number): QueryTimings {
  return { poolWaitMs: context?.poolWaitMs ?? 0, executionMs };
}
