/**
 * POST /sql: the Neon-compatible door (docs/interface.md, "POST /sql"; docs/decisions.md 11.1).
 * The same query service as POST /api/query runs the request; only the wire differs: the target
 * comes from the Neon-Connection-String header, values as PostgreSQL's text, and answers and
 * errors in the shapes the Neon driver reads.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  INTERNAL_ERROR_MESSAGE,
  errorResponse,
  RequestError,
  serializeResponse,
  type ConnectionTarget,
  type FieldDescription,
  type QueryRequest,
  type RequestOrRefusal,
  type QueryExecutionResult,
  type QueryService,
  type QueryServiceResponse,
} from '@sqlgate/core';
import type { Logger } from 'pino';
import { answerHeader, CONSISTENCY_TOKEN, setAnswerHeader } from './answer-headers';
import { giveUpWhenStalled } from './answer-stall';
import {
  neonConnectionNameOf,
  readNeonRequest,
  requestOrRefusal,
  type NeonRequest,
} from './contract';
import { ownedTarget, type Access, type Admission } from './access/admission';
import { httpStatusFor } from './http-status';
import { BodyError, readJsonText, type BodyLimits } from './json-body';
import { executeOptionsOf, serverTiming, writeJson } from './query-endpoint';
import { writeStream } from './stream-endpoint';
import { streamFormatOf } from './stream-formats';
import { observerOf } from './observability/request-observation';

/** The error fields of Neon's answers, in its order; absent ones are null. */
const ERROR_FIELDS = [
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'severity',
  'where',
  'table',
  'column',
  'schema',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
] as const;

/** Neon's error body: every field present, null where the error has none. */
function neonError(message: string, code: string, fields: Record<string, unknown> = {}): string {
  const body: Record<string, unknown> = { message, code };
  for (const name of ERROR_FIELDS) body[name] = fields[name] ?? null;
  return JSON.stringify(body);
}

/** The commands whose tag carries a count; Neon (and pg) say null for the others (SHOW, EXPLAIN…). */
const COUNTED_COMMANDS = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'MOVE',
  'FETCH',
  'COPY',
]);

/** What the Neon driver reads of a statement's answer, in Neon's order. */
function neonResult(result: QueryExecutionResult, arrayMode: boolean): Record<string, unknown> {
  const fields = result.fields ?? [];
  const rows = (result.rows ?? []) as unknown[][];
  const command = result.command ?? '';
  return {
    fields: fields.map(neonField),
    rows: arrayMode ? rows : rows.map((row) => rowObject(fields, row)),
    command,
    rowCount: COUNTED_COMMANDS.has(command) ? (result.rowCount ?? null) : null,
    rowAsArray: arrayMode,
  };
}

function neonField(field: FieldDescription): Record<string, unknown> {
  const { name, dataTypeID, tableID, columnID, dataTypeSize, dataTypeModifier } = field;
  return { name, dataTypeID, tableID, columnID, dataTypeSize, dataTypeModifier, format: 'text' };
}

/**
 * A row as an object keyed by column name; of two columns with one name the last wins, as in
 * Neon's answers. No prototype: a column may be named `__proto__`.
 */
function rowObject(fields: readonly FieldDescription[], row: readonly unknown[]): object {
  const object = Object.create(null) as Record<string, unknown>;
  fields.forEach((field, index) => (object[field.name] = row[index]));
  return object;
}

/**
 * Why a statement's rows were cut, if one's were: Neon answers 507 where rows would be lost, by
 * MAX_RESULT_BYTES or by the credentials' maxRows (docs/decisions.md 12).
 */
function cutMessage(results: readonly QueryExecutionResult[]): string | undefined {
  const cut = results.find((result) => result.truncated === true);
  if (cut === undefined) return undefined;
  return cut.truncatedBy === 'rows'
    ? "response is too large (more rows than these credentials' maxRows)"
    : 'response is too large (max is MAX_RESULT_BYTES)';
}

/** The status and JSON of a POST /sql answer. */
function renderNeonAnswer(
  response: QueryServiceResponse,
  neon: NeonRequest,
): { status: number; json: string } {
  const { body, failure } = response;
  if (failure?.internal !== undefined) throw failure.internal;
  const answer = body as Record<string, unknown>;
  if (failure) return renderFailure(answer, httpStatusFor(failure), failure.code);
  const batch = Array.isArray(neon.sql);
  const results = batch
    ? (answer.results as QueryExecutionResult[])
    : [answer as unknown as QueryExecutionResult];
  const cut = cutMessage(results);
  if (cut !== undefined) return { status: 507, json: neonError(cut, 'RESULT_TOO_LARGE') };
  const shaped = results.map((result, index) =>
    neonResult(result, neon.arrayModes[index] ?? false),
  );
  return {
    status: 200,
    json: serializeResponse(batch ? { results: shaped } : shaped[0]),
  };
}

/**
 * A failure as Neon answers it: a PostgreSQL error (it has a SQLSTATE) is a 400 with every field
 * sqlgate shows; sqlgate's own failures keep their status (403, 413, 503…) and carry its code.
 */
function renderFailure(
  answer: Record<string, unknown>,
  status: number,
  sqlgateCode: string,
): { status: number; json: string } {
  const cause = (answer.cause ?? answer.error) as Record<string, unknown> | string | undefined;
  if (typeof cause === 'object' && cause !== null && typeof cause.message === 'string') {
    const code = typeof cause.code === 'string' ? cause.code : '';
    return {
      status: isSqlState(code) ? 400 : status,
      json: neonError(cause.message, code, cause),
    };
  }
  const message = typeof cause === 'string' ? cause : String(answer.error ?? 'Request failed');
  return { status, json: neonError(message, sqlgateCode, answer) };
}

/**
 * A SQLSTATE: five digits or upper-case letters, at least one a digit (every class has one); a
 * system code has none (EPIPE) or is longer (ECONNREFUSED).
 */
function isSqlState(code: string): boolean {
  return /^(?=[A-Z]*\d)[0-9A-Z]{5}$/.test(code);
}

/**
 * Admits a POST /sql (docs/decisions.md 12): with Authorization, on the connection its
 * Neon-Connection-String names by its database; without, in the SPEC form, as before keys.
 */
async function admitNeonQuery(
  access: Access,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<RequestOrRefusal<{ admission: Admission; target?: ConnectionTarget }>> {
  // Without named connections (CONFIG_FILE), Authorization is refused where the body is read.
  if (req.headers.authorization === undefined || access.targets?.connections === undefined) {
    const admission = await access.admit(req, res, {});
    return admission instanceof RequestError ? admission : { admission };
  }
  const name = requestOrRefusal(() => neonConnectionNameOf(req.headersDistinct));
  if (name instanceof RequestError) return name;
  const admission = await access.admit(req, res, { connection: name, sql: neonTextsOf(body) });
  if (admission instanceof RequestError) return admission;
  const target = name === undefined ? undefined : admission.targets?.connections?.get(name);
  return target ? { admission, target } : { admission };
}

/** The SQL of a POST /sql body, for an allowlist: its query, or its batch's queries. */
function neonTextsOf(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return undefined;
  const { query, queries } = body as { query?: unknown; queries?: unknown };
  if (!Array.isArray(queries)) return query;
  return queries.map((item) => (item as { query?: unknown } | null)?.query);
}

/** Answers a POST /sql whose body is still to be read, once `access` admitted it. */
export function answerNeonQuery(
  service: QueryService,
  logger: Logger,
  limits: BodyLimits & { answerStallMs: number },
  access: Access,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return readJsonText(req, limits)
    .then(
      (body) => runNeonQuery(service, logger, access, body, req, res, limits.answerStallMs),
      (error: unknown) => {
        const refused = error instanceof BodyError ? error : new BodyError(400, String(error));
        // The body's own refusals (413, 415, 408, 501) have no code of sqlgate's beyond their status.
        const code = refused.status === 400 ? 'INVALID_REQUEST' : '';
        writeJson(res, refused.status, neonError(refused.message, code));
      },
    )
    .catch((error: unknown) => {
      // A defect answers 500 in the shape the driver reads; the detail goes to the log only.
      if (res.headersSent) {
        res.destroy();
        return;
      }
      logger.error({ reqId: answerHeader(res, 'X-Request-Id'), err: error }, 'internal error');
      writeJson(res, 500, neonError(INTERNAL_ERROR_MESSAGE, ''));
    });
}

async function runNeonQuery(
  service: QueryService,
  logger: Logger,
  access: Access,
  body: unknown,
  req: IncomingMessage,
  res: ServerResponse,
  answerStallMs: number,
): Promise<void> {
  const admitted = await admitNeonQuery(access, req, res, body);
  if (admitted instanceof RequestError) {
    const status = httpStatusFor(errorResponse(admitted, 0).failure);
    writeJson(res, status, neonError(admitted.message, admitted.code));
    return;
  }
  const { admission, target } = admitted;
  const read = requestOrRefusal(() => readNeonRequest(req.headersDistinct, body, target));
  if (read instanceof RequestError) {
    writeJson(res, 400, neonError(read.message, read.code));
    return;
  }
  const { place, sql } = read;
  for (const [name, value] of Object.entries(read.batchEcho ?? {})) {
    setAnswerHeader(res, name, value);
  }
  // An empty batch runs nothing: Neon answers it without a transaction.
  if (Array.isArray(sql) && sql.length === 0) {
    writeJson(res, 200, JSON.stringify({ results: [] }));
    return;
  }
  const options = {
    ...executeOptionsOf(res),
    textValues: read.rawText,
    oneStatement: !Array.isArray(read.sql),
  };
  let response: QueryServiceResponse;
  if ('sessionId' in place) {
    response = await service.executeInSession(
      place.sessionId,
      { sql: sql as string, options: read.options },
      options,
    );
  } else {
    const request: QueryRequest = {
      target: ownedTarget(place.target, admission),
      sql,
      options: read.options,
    };
    // No row limit is asked for here: the credentials' is the limit (core), past which the
    // answer is a 507.
    if (admission.identity) request.identity = admission.identity;
    // A statement's rows as they arrive (sqlgate's NDJSON lines, values as text): the client's
    // stream(). A request that fails before its first row is answered as any other.
    if (typeof sql === 'string' && streamFormatOf(req.headers.accept) === 'ndjson') {
      const answer = await service.stream(request, { ...options, rows: 'text' });
      if (answer.streamed) {
        await writeStream(res, logger, answer, 'ndjson', answerStallMs, observerOf(res));
        return;
      }
      response = answer.response;
    } else {
      response = await service.execute(request, options);
    }
  }
  const started = performance.now();
  const rendered = renderNeonAnswer(response, read);
  const { poolWaitMs, executionMs } = response.timings;
  const timing = serverTiming(poolWaitMs, executionMs, performance.now() - started);
  // docs/decisions.md 13: where it ran and, after a write, its token; Neon's bodies are unchanged.
  setAnswerHeader(
    res,
    'Server-Timing',
    response.servedBy === undefined ? timing : `${timing}, served;desc=${response.servedBy}`,
  );
  if (response.consistencyToken !== undefined) {
    setAnswerHeader(res, CONSISTENCY_TOKEN, response.consistencyToken);
  }
  writeJson(res, rendered.status, rendered.json);
  giveUpWhenStalled(res, answerStallMs);
}
