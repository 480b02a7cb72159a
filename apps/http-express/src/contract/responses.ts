/**
 * The response bodies of every endpoint (docs/interface.md). Each lists every property the service
 * can send and requires exactly the ones it always sends. Objects stay open unless a closed object
 * is what tells two error shapes apart: `ErrorMessage` and `ConnectionErrorObject` are closed so
 * that each `oneOf` of a route matches exactly one shape.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  Location,
  OneOf,
  StringEnum,
  NonNegativeInteger,
  NonNegativeNumber,
  NullableInteger,
  NullableString,
} from './schema-builders';

/** Unknown request fields, named with a suggestion; on every answer of POST /api/query after the body was read. */
export const WarningsSchema = Type.Array(Type.String(), {
  $id: 'Warnings',
  minItems: 1,
  description:
    "Present when the request had fields sqlgate does not know, e.g. \"unknown field 'maxrows' (did you mean " +
    "'maxRows'?)\". Such fields are ignored; the request ran without them.",
});
const warnings = Type.Optional(WarningsSchema);

/** What an answer of a session's request says of the session (docs/decisions.md 10.26). */
export const SessionStateSchema = Type.Union(
  [
    Type.Object(
      {
        status: Type.Literal('open'),
        transactionStatus: Type.Union(
          [Type.Literal('idle'), Type.Literal('in-transaction'), Type.Literal('failed')],
          {
            description:
              "The session's transaction after the request: none, open, or failed (only ROLLBACK is accepted).",
          },
        ),
        expiresAt: Type.String({
          format: 'date-time',
          description: 'When the session ends unless another request comes first.',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        status: Type.Literal('closed'),
        reason: Type.Union(
          [
            Type.Literal('closed'),
            Type.Literal('idle'),
            Type.Literal('lifetime'),
            Type.Literal('broken'),
            Type.Literal('shutdown'),
          ],
          {
            description:
              'Why: closed by DELETE, idle too long, SESSION_MAX_LIFETIME_MS reached, its connection broke, or shutdown.',
          },
        ),
      },
      {
        additionalProperties: false,
        description:
          'The session ended during the request: its connection was lost, or it was closed or expired meanwhile.',
      },
    ),
  ],
  {
    $id: 'SessionState',
    description:
      'Only on answers of POST /api/sessions/{sessionId}/query, once the session was found: its state after the request.',
  },
);
const session = Type.Optional(SessionStateSchema);

/** docs/decisions.md 13: only on a named connection with replicas. */
const servedBy = Type.Optional(
  Type.Union([Type.Literal('primary'), Type.Literal('replica')], {
    description:
      'Only on a named connection with replicas: where the request ran, its primary or one of its replicas.',
  }),
);
/** On the answer of a request stopped by a cancel (docs/decisions.md 10.26). */
const cancelled = Type.Optional(
  Type.Literal(true, {
    description:
      'The request was cancelled (POST /api/requests/{requestId}/cancel, DELETE /api/sessions/{sessionId}/query, or ' +
      'its session ended); answered 409 REQUEST_CANCELLED.',
  }),
);

/**
 * One column's value. Written out as the JSON types it can be, and objects with their
 * `additionalProperties`: a bare `{type: 'object'}` is generated as an object without keys
 * (`Record<string, never>`), which made every row value unreadable in generated clients.
 */
export const ValueSchema = Type.Union(
  [
    Type.Boolean(),
    Type.Number(),
    Type.String(),
    Type.Null(),
    Type.Array(Type.Unknown()),
    Type.Object({}, { additionalProperties: Type.Unknown() }),
  ],
  {
    $id: 'Value',
    description:
      'One value: boolean, number (int2, int4, oid, float4, float8), string (int8, numeric, money, dates and times as ' +
      'PostgreSQL prints them, bytea as \\x hex, every other type as PostgreSQL text), parsed JSON (json, jsonb), an ' +
      'array of those (PostgreSQL arrays), or null.',
  },
);

/** A row with rowMode object: a value per column name. */
const ObjectRowSchema = Type.Object({}, { additionalProperties: ValueSchema });

export const RowsSchema = Type.Union(
  [Type.Array(ObjectRowSchema), Type.Array(Type.Array(ValueSchema))],
  {
    $id: 'Rows',
    description:
      'Result rows. With rowMode object (default): objects keyed by column name. With rowMode array: arrays in column ' +
      'order. Empty for statements that return no rows.',
  },
);

export const FieldDescriptionSchema = Type.Object(
  {
    name: Type.String({ description: 'Column name.' }),
    dataTypeID: Type.Integer({ description: 'OID of the column type.' }),
    dataTypeName: Type.String({
      description: 'Name of the column type, e.g. int4, timestamptz, or a custom type name.',
    }),
    tableID: Type.Integer({
      description: 'OID of the table the column comes from; 0 when it is not a table column.',
    }),
    columnID: Type.Integer({
      description: 'Attribute number of the column in its table; 0 when it is not a table column.',
    }),
    dataTypeSize: Type.Integer({
      description: 'Size of the type in bytes; negative for variable-length types.',
    }),
    dataTypeModifier: Type.Integer({
      description: 'Type modifier (e.g. varchar length); -1 when none.',
    }),
    format: Type.Union([Type.Literal('text'), Type.Literal('binary')], {
      description: 'Wire format of the column.',
    }),
  },
  {
    $id: 'FieldDescription',
    description: 'Column metadata as the server described it, plus the name of the type.',
  },
);

const presentAs = (description: string) =>
  Type.Optional(Type.Literal(true, { description: `Present when ${description}.` }));

/** What the result cache did for one statement (docs/decisions.md 10.27). */
const cacheStatusFields = {
  cacheStatus: Type.Optional(
    StringEnum(['hit', 'stale', 'miss', 'bypass'] as const, {
      description:
        'What the result cache did: served the result (hit, also when it waited for an identical read ' +
        'already running), served it past its ttlMs while one refresh runs (stale), looked it up in vain ' +
        'and ran the statement (miss), or was not used (bypass, with cacheReason).',
    }),
  ),
  cacheReason: Type.Optional(
    StringEnum(
      [
        'disabled',
        'stream',
        'write',
        'transaction',
        'volatile',
        'oversize',
        'unavailable',
      ] as const,
      {
        description:
          'With cacheStatus bypass: the request did not ask for the cache or there is none (disabled), its rows ' +
          'were streamed (stream), the statement writes (write), it is a read sharing its request with a write ' +
          'or a session change (transaction), it calls a volatile function or changes the session (volatile), ' +
          'its result was over the byte bound (oversize), or the cache store could not be reached or the server ' +
          'would not tell which database it is (unavailable).',
      },
    ),
  ),
};

export const QueryExecutionResultSchema = Type.Object(
  {
    rows: RowsSchema,
    fields: Type.Array(FieldDescriptionSchema, {
      description: 'Column metadata; empty when the statement returns no rows.',
    }),
    rowCount: NullableInteger({
      description:
        'Rows affected or returned, from the command tag; null when the server sent none.',
    }),
    command: NullableString({
      description:
        'Command tag verb, e.g. SELECT, INSERT, UPDATE, DELETE, CREATE; null when the server sent none.',
    }),
    executionTime: NonNegativeNumber('Execution time in milliseconds.'),
    statement: Type.String({
      description:
        'The executed statement text (comments removed, whitespace normalised), followed by ; when the submitted text terminated it with one.',
    }),
    truncated: presentAs('more rows existed than were returned'),
    truncatedBy: Type.Optional(
      Type.Union([Type.Literal('rows'), Type.Literal('bytes')], {
        description: 'With truncated: the limit that cut the rows, maxRows or MAX_RESULT_BYTES.',
      }),
    ),
    cached: presentAs('the result was served from the result cache'),
    ...cacheStatusFields,
    rolledBack: presentAs(
      'nothing the request did was kept (dryRun, or a transaction the statement left open)',
    ),
    warnings,
    session,
    servedBy,
  },
  { $id: 'QueryExecutionResult', description: 'The result of one statement that succeeded.' },
);

/** docs/decisions.md 10.5: the statement, or sqlgate's COMMIT, may have committed. */
function OutcomeUnknown() {
  return Type.Literal(true, {
    description:
      'Present when the connection was lost after a statement that commits on its own (a write outside a transaction, ' +
      'a COMMIT) reached the server: it may have committed. Check before running it again.',
  });
}

export const QueryErrorObjectSchema = Type.Object(
  {
    message: Type.String({ description: 'Database error message.' }),
    code: Type.String({ description: 'SQLSTATE, e.g. 42601, 23505, 57014.' }),
    severity: Type.Optional(Type.String({ description: 'Severity label, e.g. ERROR, FATAL.' })),
    routine: Type.Optional(Type.String({ description: 'Server routine that raised the error.' })),
    executionTime: NonNegativeNumber('Milliseconds elapsed.'),
    detail: Type.Optional(Type.String()),
    hint: Type.Optional(Type.String()),
    position: Type.Optional(
      Type.String({
        pattern: '^[0-9]+$',
        description: '1-based character position within the statement text.',
      }),
    ),
    where: Type.Optional(Type.String({ description: 'Context (call stack) of the error.' })),
    schema: Type.Optional(Type.String()),
    table: Type.Optional(Type.String()),
    column: Type.Optional(Type.String()),
    dataType: Type.Optional(Type.String()),
    constraint: Type.Optional(Type.String()),
    internalPosition: Type.Optional(Type.String()),
    internalQuery: Type.Optional(Type.String()),
    statementIndex: Type.Optional(
      NonNegativeInteger(
        '0-based index of the failing statement; absent when the error came before any statement ran (e.g. at login).',
      ),
    ),
    location: Type.Optional(
      Location(
        'Line and column (1-based) of position, or of the start of the statement, within the submitted SQL text.',
        false,
      ),
    ),
    outcomeUnknown: Type.Optional(OutcomeUnknown()),
  },
  {
    $id: 'QueryErrorObject',
    description:
      'A database error with every field the server sent, and where it points in the submitted text. Optional fields are ' +
      'present only when the server (or the position) gives them.',
  },
);

export const FailedStatementResultSchema = Type.Object(
  {
    error: Type.String({ description: 'The database error message.' }),
    executionTime: NonNegativeNumber('Milliseconds elapsed until the failure.'),
    statement: Type.String({ description: 'The statement text, as in QueryExecutionResult.' }),
    cause: QueryErrorObjectSchema,
    ...cacheStatusFields,
  },
  {
    $id: 'FailedStatementResult',
    description: 'The entry of results for the statement that failed in a multi-statement request.',
  },
);

export const StatementResultSchema = OneOf(
  [QueryExecutionResultSchema, FailedStatementResultSchema],
  {
    $id: 'StatementResult',
    description: 'One entry of results: a statement that succeeded or the one that failed.',
  },
);

export const MultipleStatementsResponseSchema = Type.Object(
  {
    multipleResults: Type.Literal(true, { description: 'Always true.' }),
    results: Type.Array(StatementResultSchema, {
      description:
        'One entry per statement that ran, in statement order; a strategy that stops at a failure omits the statements after it.',
    }),
    totalExecutionTime: NonNegativeNumber(
      'Total milliseconds of the request; for parallel reads not the sum of the parts.',
    ),
    transactionUsed: Type.Optional(
      Type.Boolean({
        description:
          'Whether the service wrapped the statements in a transaction of its own; absent for parallel reads.',
      }),
    ),
    rolledBack: presentAs(
      'nothing the request did was kept (dryRun, or a transaction the script left open)',
    ),
    error: Type.Optional(
      Type.String({
        description:
          "Present on failure: 'One or more statements failed', or 'The script left a transaction open; it was rolled back'.",
      }),
    ),
    failedStatementIndex: Type.Optional(
      NonNegativeInteger('0-based index of the failed statement, when a statement failed.'),
    ),
    warnings,
    session,
    servedBy,
    cancelled,
  },
  {
    $id: 'MultipleStatementsResponse',
    description:
      'The response to several statements. Reads only: run in parallel, no transactionUsed. With BEGIN/COMMIT/SAVEPOINT...: ' +
      'run as written, transactionUsed false. With VACUUM, CREATE DATABASE, ... CONCURRENTLY: run in order in autocommit, ' +
      'transactionUsed false. Otherwise: wrapped in one transaction, transactionUsed true.',
  },
);

export const MultipleStatementsFailureSchema = Type.Unsafe<
  Static<typeof MultipleStatementsResponseSchema> & { error: string }
>({
  $id: 'MultipleStatementsFailure',
  description:
    'A multi-statement request outside the service transaction that failed (the parallel path is always status 400).',
  // The property written out with `required`: a bare `{required: ['error']}` left `error` optional
  // in generated clients.
  allOf: [
    MultipleStatementsResponseSchema,
    { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
  ],
});

export const TransactionFailureResponseSchema = Type.Object(
  {
    error: Type.String({
      pattern: '^Transaction failed at statement: ',
      description:
        "'Transaction failed at statement: <first 100 characters of the statement>... Error: <database message>'.",
    }),
    transactionUsed: Type.Literal(true),
    rolledBack: Type.Literal(true),
    failedStatementIndex: NonNegativeInteger(
      '0-based index of the failing statement; the number of statements when COMMIT failed.',
    ),
    results: Type.Array(QueryExecutionResultSchema, {
      description:
        'Results of the statements before the failing one; their changes were rolled back.',
    }),
    cause: QueryErrorObjectSchema,
    totalExecutionTime: NonNegativeNumber('Total milliseconds of the request.'),
    warnings,
    session,
    servedBy,
    cancelled,
  },
  {
    $id: 'TransactionFailureResponse',
    description:
      'A statement (or COMMIT) failed inside the transaction the service opened; every change of the request was rolled back.',
  },
);

export const QueryErrorResponseSchema = Type.Object(
  { error: QueryErrorObjectSchema, warnings, session, cancelled, servedBy },
  {
    $id: 'QueryErrorResponse',
    description:
      'A single statement failed in the database, or the database refused the login or the database name.',
  },
);

export const ConnectionErrorObjectSchema = Type.Object(
  {
    message: Type.String(),
    code: Type.String({ minLength: 1 }),
    outcomeUnknown: Type.Optional(OutcomeUnknown()),
  },
  {
    $id: 'ConnectionErrorObject',
    additionalProperties: false,
    description:
      'Talking to the target failed outside a statement. code: the SQLSTATE when the server sent one, else the system ' +
      'code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, ECONNRESET...), or POOL_EXHAUSTED.',
  },
);

export const ConnectionFailureResponseSchema = Type.Object(
  { error: ConnectionErrorObjectSchema, warnings, session, cancelled, servedBy },
  {
    $id: 'ConnectionFailureResponse',
    description: 'The target was refused, unreachable, timed out or had no free pooled connection.',
  },
);

export const ErrorMessageSchema = Type.Object(
  {
    error: Type.String(),
    missing: Type.Optional(
      Type.Array(Type.String(), {
        minItems: 1,
        description: "With 'Missing required fields': the names of the missing fields.",
      }),
    ),
    statementIndex: Type.Optional(
      NonNegativeInteger(
        '0-based index of the statement the error is about (an unsupported statement, an option it cannot be combined with).',
      ),
    ),
    location: Type.Optional(
      Location(
        "With 'Unterminated <what> starting at line L, column C': where the string, quoted identifier, dollar quote " +
          'or block comment that is never closed starts in the submitted SQL text (1-based).',
        true,
      ),
    ),
    code: Type.Optional(
      Type.String({
        description:
          'On errors of the session and cancel endpoints: SESSION_NOT_FOUND, SESSION_BUSY, SESSION_LIMIT, ' +
          'SESSIONS_OFF, SHUTTING_DOWN, REQUEST_NOT_FOUND, CANCEL_LIMITED, REQUEST_CANCELLED; on what cannot work ' +
          'behind a transaction pooler: TRANSACTION_POOLING.',
      }),
    ),
    warnings,
    session,
    cancelled,
  },
  {
    $id: 'ErrorMessage',
    additionalProperties: false,
    description:
      "A request that cannot be run as sent, or an error outside the query service: e.g. 'Missing required fields', " +
      "'No valid SQL statements found', 'Request body is not valid JSON', 'Request body too large', a sentence naming " +
      'the wrong field, unknown path or wrong method.',
  },
);

/** One line of a streamed (NDJSON) answer of POST /api/query: an object with one key naming its kind. */
export const StreamLineSchema = Type.Union(
  [
    Type.Object(
      {
        statement: Type.Object({
          index: Type.Integer({ minimum: 0, description: '0-based index of the statement.' }),
          text: Type.String({ description: 'The statement as executed.' }),
          fields: Type.Array(FieldDescriptionSchema),
        }),
      },
      { description: 'A statement begins.' },
    ),
    Type.Object(
      { row: Type.Union([ObjectRowSchema, Type.Array(ValueSchema)]) },
      { description: 'One row of the statement last begun: an object or an array, per rowMode.' },
    ),
    Type.Object(
      {
        end: Type.Object({
          index: Type.Integer({ minimum: 0 }),
          command: Type.Union([Type.String(), Type.Null()]),
          rowCount: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
          executionTime: Type.Number({ minimum: 0 }),
          truncated: Type.Optional(Type.Literal(true)),
          truncatedBy: Type.Optional(Type.Union([Type.Literal('rows'), Type.Literal('bytes')])),
        }),
      },
      { description: 'The statement finished.' },
    ),
    Type.Object(
      {
        error: Type.Object({
          error: Type.String({ description: 'What failed, as a sentence.' }),
          cause: Type.Optional(
            Type.Object({}, { description: "The failure's error object, when it has one." }),
          ),
          code: Type.String(),
          sqlState: Type.Optional(Type.String()),
        }),
      },
      {
        description:
          'The request failed after streaming began: the fields of the error body the JSON answer would have had ' +
          '(error, failedStatementIndex, cause, rolledBack...), with the code and SQLSTATE that would have set its status. ' +
          '`error` is always the sentence; an error object (a one-statement answer has one) is `cause`.',
      },
    ),
    Type.Object(
      {
        done: Type.Object({
          totalExecutionTime: Type.Number({ minimum: 0 }),
          transactionUsed: Type.Optional(Type.Boolean()),
          rolledBack: Type.Optional(Type.Literal(true)),
          warnings: Type.Optional(WarningsSchema),
          servedBy: Type.Optional(
            Type.Union([Type.Literal('primary'), Type.Literal('replica')], {
              description: 'On a named connection with replicas: where the request ran.',
            }),
          ),
          consistencyToken: Type.Optional(
            Type.String({
              description:
                'On a named connection with replicas, for a request that may have written: the token to send back ' +
                'as Sqlgate-Consistency-Token (also sent as an HTTP trailer of that name).',
            }),
          ),
        }),
      },
      { description: 'The last line: the answer is complete. A stream without it was cut.' },
    ),
  ],
  { $id: 'StreamLine' },
);
