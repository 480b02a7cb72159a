/**
 * POST /sql, the Neon-compatible door (docs/interface.md, "POST /sql"): its request headers and
 * bodies as JSON Schema, and their reading into core's typed request. The stock
 * `@neondatabase/serverless` driver, and the ORMs built on it, send these.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  UNLIMITED_ROWS,
  type BatchStatement,
  type ConnectionTarget,
  type IsolationLevel,
  type QueryOptions,
} from '@sqlgate/core';
import { compileShape } from './body-shape';
import { connectionTargetOf } from './connection-string';
import { invalid, refuseUnsendableParams } from './sendable-values';

export const NeonQuerySchema = Type.Object(
  {
    query: Type.String({ description: 'One SQL statement; `$1`, `$2`… name its parameters.' }),
    params: Type.Optional(
      Type.Array(Type.Unknown(), {
        description:
          'Values of $1, $2…: null is NULL, a string is sent as it is, an array as a PostgreSQL array, an ' +
          'object as JSON.',
      }),
    ),
    arrayMode: Type.Optional(
      Type.Boolean({ description: 'Rows as arrays (true) or objects; overrides Neon-Array-Mode.' }),
    ),
  },
  { title: 'NeonQuery' },
);

export const NeonBatchSchema = Type.Object(
  {
    queries: Type.Array(NeonQuerySchema, {
      description: 'Run in order in one transaction; the first failure rolls it back.',
    }),
  },
  { title: 'NeonBatch' },
);

const QUERY = compileShape(NeonQuerySchema);

/** Neon-Batch-Isolation-Level's values, as the Neon driver spells them. */
const ISOLATION_LEVELS: Record<string, IsolationLevel> = {
  ReadUncommitted: 'read uncommitted',
  ReadCommitted: 'read committed',
  RepeatableRead: 'repeatable read',
  Serializable: 'serializable',
};

/** The batch headers a batch's answer echoes, as Neon does: the level always, flags when true. */
export type BatchEcho = Record<string, string>;

/** A POST /sql request read: what to run, and how its answer is shaped. */
export interface NeonRequest {
  /**
   * Where it runs: the target Neon-Connection-String names, or a sqlgate session (the
   * Sqlgate-Session header: the session decides the target, and its transaction is the caller's).
   */
  place: { target: ConnectionTarget } | { sessionId: string };
  /** A statement, or a batch's. */
  sql: string | BatchStatement[];
  options: QueryOptions;
  /** Values as PostgreSQL's text (Neon-Raw-Text-Output: true), as the driver always asks. */
  rawText: boolean;
  /** Per query: rows as arrays. */
  arrayModes: boolean[];
  /** A batch's headers its answer echoes (a batch is a list `sql`: its answer is `{results}`). */
  batchEcho?: BatchEcho;
}

/** The headers of a request, each with every value it was given (Node's `headersDistinct`). */
export type DistinctHeaders = Record<string, string[] | undefined>;

/**
 * A header's value, or undefined; one given twice is refused: Node would join the two values with
 * a comma, and a connection string joined to another is a database name holding a password.
 */
export function singleHeader(headers: DistinctHeaders, name: string): string | undefined {
  const values = headers[name.toLowerCase()];
  if (values === undefined) return undefined;
  if (values.length > 1) throw invalid(`The ${name} header is given more than once`);
  return values[0];
}

/** Where a request runs: a session named by Sqlgate-Session, or the Neon-Connection-String target. */
function placeOf(headers: DistinctHeaders): NeonRequest['place'] {
  const connectionString = singleHeader(headers, 'Neon-Connection-String');
  const sessionId = singleHeader(headers, 'Sqlgate-Session');
  if (sessionId !== undefined) {
    if (connectionString !== undefined) {
      throw invalid(
        'A request in a session (Sqlgate-Session) names no Neon-Connection-String: the session decides the target',
      );
    }
    if (sessionId === '') {
      throw invalid('The Sqlgate-Session header names a session id');
    }
    return { sessionId };
  }
  if (connectionString === undefined || connectionString === '') {
    throw invalid('The Neon-Connection-String header is required');
  }
  return { target: connectionTargetOf(connectionString) };
}

/**
 * The connection a POST /sql with a key or token runs on: the database its Neon-Connection-String
 * names (`postgresql://app.example/app` is the connection `app`), as the Neon driver sends a
 * connection string with every request. One with a password names a target of its own: both
 * forms at once are refused (docs/decisions.md 12).
 */
export function neonConnectionNameOf(headers: DistinctHeaders): string | undefined {
  if (singleHeader(headers, 'Sqlgate-Session') !== undefined) {
    throw invalid(
      'A request in a session (Sqlgate-Session) sends no Authorization: the session id is its credential',
    );
  }
  const connectionString = singleHeader(headers, 'Neon-Connection-String');
  if (connectionString === undefined || connectionString === '') return undefined;
  const target = connectionTargetOf(connectionString);
  if (target.password !== undefined) {
    throw invalid(
      'With an Authorization header, Neon-Connection-String names a connection by its database and carries no password',
    );
  }
  return target.database;
}

/** Neon reads its flag headers as on only when exactly `true`. */
function flag(headers: DistinctHeaders, name: string): boolean {
  return singleHeader(headers, name) === 'true';
}

/** `value` as a JSON object; the refusal says `what` must hold. */
function objectOf(value: unknown, what: string, holding: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`${what} must be a JSON object holding ${holding}`);
  }
  return value as Record<string, unknown>;
}

/** A query of the body, its params checked as /api/query checks them. */
function queryOf(fields: Record<string, unknown>): Static<typeof NeonQuerySchema> {
  const query = QUERY(fields);
  refuseUnknownFields(fields, ['query', 'params', 'arrayMode']);
  if (query.params) refuseUnsendableParams(query.params);
  return query;
}

/**
 * Fields the Neon protocol does not have are refused rather than ignored: nothing a caller sends
 * is silently dropped.
 */
function refuseUnknownFields(fields: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(fields).find((name) => !known.includes(name));
  if (unknown !== undefined) {
    throw invalid(`Unknown field '${unknown.slice(0, 64)}': POST /sql takes ${known.join(', ')}`);
  }
}

/**
 * The request of a POST /sql: the target from Neon-Connection-String, the statement or batch from
 * the body. Throws RequestError (400) for what it refuses.
 */
export function readNeonRequest(
  headers: DistinctHeaders,
  body: unknown,
  admitted?: ConnectionTarget,
): NeonRequest {
  // Without a key or token the server knows (CONFIG_FILE), an Authorization header would be
  // ignored: refused rather than run without it.
  if (headers.authorization !== undefined && admitted === undefined) {
    throw invalid(
      'Without named connections (CONFIG_FILE), POST /sql does not take an Authorization header: the password travels in Neon-Connection-String',
    );
  }
  const levelName = singleHeader(headers, 'Neon-Batch-Isolation-Level');
  const isolationLevel =
    typeof levelName === 'string' && Object.hasOwn(ISOLATION_LEVELS, levelName)
      ? ISOLATION_LEVELS[levelName]
      : undefined;
  if (levelName !== undefined && isolationLevel === undefined) {
    throw invalid(
      `Neon-Batch-Isolation-Level must be one of ${Object.keys(ISOLATION_LEVELS).join(', ')}`,
    );
  }
  const place = admitted ? { target: admitted } : placeOf(headers);
  const fields = objectOf(body, 'Request body', '`query` or `queries`');
  const rawText = flag(headers, 'Neon-Raw-Text-Output');
  const arrayMode = flag(headers, 'Neon-Array-Mode');
  const options: QueryOptions = {
    // No row limit but the result's bytes (MAX_RESULT_BYTES): past it the answer is a 507, as
    // Neon's, never rows silently dropped.
    maxRows: UNLIMITED_ROWS,
    rowMode: 'array',
    readOnly: false,
    dryRun: false,
  };
  // The result cache keeps sqlgate's values, not PostgreSQL's text; a session never uses it.
  if ('target' in place) options.cache = false;
  if (!('queries' in fields)) {
    const query = queryOf(fields);
    if (query.params && query.params.length > 0) options.params = query.params;
    return {
      place,
      sql: query.query,
      options,
      rawText,
      arrayModes: [query.arrayMode ?? arrayMode],
    };
  }
  refuseUnknownFields(fields, ['queries']);
  if ('sessionId' in place) {
    throw invalid(
      'A batch does not run in a session (Sqlgate-Session): its transaction would end the one the session holds; send its queries one by one',
    );
  }
  if (!Array.isArray(fields.queries)) {
    throw invalid("'queries' must be an array of {query, params, arrayMode}");
  }
  const queries = fields.queries.map((item, index) =>
    queryOf(objectOf(item, `queries[${index}]`, '`query`')),
  );
  const readOnly = flag(headers, 'Neon-Batch-Read-Only');
  const deferrable = flag(headers, 'Neon-Batch-Deferrable');
  const batchEcho: BatchEcho = {};
  if (isolationLevel !== undefined) {
    options.isolationLevel = isolationLevel;
    batchEcho['Neon-Batch-Isolation-Level'] = levelName as string;
  }
  if (readOnly) {
    options.readOnly = true;
    batchEcho['Neon-Batch-Read-Only'] = 'true';
  }
  if (deferrable) {
    options.deferrable = true;
    batchEcho['Neon-Batch-Deferrable'] = 'true';
  }
  return {
    place,
    sql: queries.map((query) =>
      query.params ? { sql: query.query, params: query.params } : { sql: query.query },
    ),
    options,
    rawText,
    arrayModes: queries.map((query) => query.arrayMode ?? arrayMode),
    batchEcho,
  };
}

const NeonFieldSchema = Type.Object({
  name: Type.String(),
  dataTypeID: Type.Integer({ description: "The column's type OID, as the server sent it." }),
  tableID: Type.Integer(),
  columnID: Type.Integer(),
  dataTypeSize: Type.Integer(),
  dataTypeModifier: Type.Integer(),
  format: Type.Literal('text'),
});

export const NeonResultSchema = Type.Object(
  {
    fields: Type.Array(NeonFieldSchema),
    rows: Type.Array(
      Type.Union([Type.Array(Type.Unknown()), Type.Record(Type.String(), Type.Unknown())]),
      {
        description:
          "Arrays or objects (rowAsArray); with Neon-Raw-Text-Output: true every value is PostgreSQL's text or null.",
      },
    ),
    command: Type.String({ description: "The command tag's first word: SELECT, INSERT…" }),
    rowCount: Type.Union([Type.Integer(), Type.Null()], {
      description: "The command tag's count; null when it has none (CREATE TABLE…).",
    }),
    rowAsArray: Type.Boolean(),
  },
  { title: 'NeonResult' },
);

export const NeonBatchResultSchema = Type.Object(
  { results: Type.Array(NeonResultSchema) },
  { title: 'NeonBatchResult' },
);

const nullableText = Type.Union([Type.String(), Type.Null()]);

export const NeonErrorSchema = Type.Object(
  {
    message: Type.String(),
    code: Type.String({ description: "The SQLSTATE, or sqlgate's code for its own refusals." }),
    detail: nullableText,
    hint: nullableText,
    position: nullableText,
    internalPosition: nullableText,
    internalQuery: nullableText,
    severity: nullableText,
    where: nullableText,
    table: nullableText,
    column: nullableText,
    schema: nullableText,
    dataType: nullableText,
    constraint: nullableText,
    file: Type.Null({ description: "PostgreSQL's source file: never shown." }),
    line: Type.Null({ description: "PostgreSQL's source line: never shown." }),
    routine: nullableText,
  },
  { title: 'NeonError' },
);
