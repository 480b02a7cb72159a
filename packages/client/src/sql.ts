/**
 * `sqlgate({ url, connectionString })`, or `sqlgate({ url, connection, authToken })` without a
 * database password (target.ts): a query function that is a drop-in for the Neon driver's
 * `neon()` (a tagged template, `.query`, `.transaction`, `.unsafe`), so the ORMs built on it run
 * unchanged, and that goes beyond it: `.begin` for an interactive transaction on a sqlgate
 * session, and an AbortSignal on every call (aborting it ends the request, and sqlgate cancels
 * the statement in PostgreSQL).
 */
import { prepareValue } from './parameters';
import { SqlgateError } from './errors';
import { oneAtATime, type InTurn } from './one-at-a-time';
import { endAtExit } from './open-sessions';
import { readResult, type FullQueryResult, type ReadOptions } from './results';
import { rowsOf } from './stream';
import { targetOf, withToken, type AuthToken, type Target, type TargetOptions } from './target';
import type { TypeOverrides } from './type-parsers';
import {
  closeSession,
  openSession,
  runBatch,
  runStatement,
  streamStatement,
  type BatchOptions,
  type Place,
  type Statement,
  wireTo,
  type Wire,
} from './wire';

export interface ClientOptions extends ReadOptions {
  /** sqlgate's base URL: its POST /sql and sessions are used. */
  url: string;
  /** The fetch to use; default `globalThis.fetch`. */
  fetch?: typeof fetch;
}

/**
 * sqlgate's URL and exactly one target: `connectionString`, the PostgreSQL server as a libpq URI
 * (`postgresql://user:password@host:port/db?sslmode=…`); or `connection`, the name of one of the
 * server's connections (its CONFIG_FILE), with `authToken`, an API key or a JWT, or a function
 * giving one for each request.
 */
export type SqlgateOptions = ClientOptions & TargetOptions;

export interface QueryOptions extends ReadOptions {
  /** Aborting it ends the request: sqlgate cancels the statement in PostgreSQL. */
  signal?: AbortSignal;
  /** For this call, in place of the client's (a client made with `connection` only). */
  authToken?: AuthToken;
}

export type TransactionOptions = QueryOptions & BatchOptions;

/** Raw SQL text, inlined where it is interpolated (`sql.unsafe`). */
export class UnsafeSql {
  constructor(readonly text: string) {}
}

/** A template's parts, kept so that it can be inlined in another template (a fragment). */
interface TemplateParts {
  strings: readonly string[];
  values: readonly unknown[];
}

/**
 * A statement not sent yet: awaiting it sends it, once. A batch (`transaction`) reads its text and
 * values instead, and sends them together.
 */
export class SqlQuery<T = unknown> implements PromiseLike<T> {
  private sent: Promise<T> | undefined;

  /** @internal */
  constructor(
    readonly statement: () => Statement,
    readonly options: QueryOptions,
    private readonly run: (query: SqlQuery<T>) => Promise<T>,
    /** @internal Set for a tagged template: it may be inlined in another. */
    readonly template?: TemplateParts,
  ) {}

  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.sent ??= this.run(this);
    return this.sent.then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onFinally);
  }

  readonly [Symbol.toStringTag] = 'SqlQuery';
}

function isBinary(value: unknown): boolean {
  return ArrayBuffer.isView(value);
}

/**
 * A template's text and values: an interpolated fragment is inlined, `unsafe` text inlined as it
 * is, any other value bound to the next `$n` (binary ones cast to bytea, as the Neon driver does).
 */
function compileTemplate(parts: TemplateParts, params: unknown[]): string {
  let text = parts.strings[0] ?? '';
  parts.values.forEach((value, index) => {
    if (value instanceof SqlQuery) {
      if (!value.template) {
        throw new TypeError(
          'Only a tagged template can be interpolated in another; not sql.query(…)',
        );
      }
      text += compileTemplate(value.template, params);
    } else if (value instanceof UnsafeSql) {
      text += value.text;
    } else {
      params.push(value);
      text += `$${params.length}${isBinary(value) ? '::bytea' : ''}`;
    }
    text += parts.strings[index + 1] ?? '';
  });
  return text;
}

function statementOf(text: string, params: readonly unknown[]): Statement {
  return { query: text, params: params.map((value) => prepareValue(value)) };
}

/** The BEGIN of `begin()`'s transaction. */
function beginText({ isolationLevel, readOnly, deferrable }: BatchOptions): string {
  let text = 'BEGIN';
  if (isolationLevel)
    text += ` ISOLATION LEVEL ${isolationLevel.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase()}`;
  if (readOnly) text += ' READ ONLY';
  if (deferrable) text += ' DEFERRABLE';
  return text;
}

/**
 * What a query resolves to: its rows (objects, or arrays with `arrayMode`), or with `fullResults`
 * a FullQueryResult. Which, its options decide at run time; typed loosely, as the Neon driver's
 * default is.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Result = any;

export interface Sql {
  (strings: TemplateStringsArray, ...values: unknown[]): SqlQuery<Result>;
  /** One statement with `$1`, `$2`… and their values. */
  query(text: string, params?: readonly unknown[], options?: QueryOptions): SqlQuery<Result>;
  /** SQL text inlined as it is where it is interpolated: never put a caller's input in it. */
  unsafe(text: string): UnsafeSql;
  /** Statements run in order in one transaction (one request); the first failure rolls back all. */
  transaction(
    queries: readonly SqlQuery<Result>[] | ((sql: Sql) => readonly SqlQuery<Result>[]),
    options?: TransactionOptions,
  ): Promise<Result[]>;
  /**
   * An interactive transaction on a sqlgate session: COMMIT when `work` returns, ROLLBACK when it
   * throws; the session ends either way.
   */
  begin<T>(work: (tx: Sql) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** One statement's rows as they arrive; leaving the loop early cancels the statement. */
  stream(text: string, params?: readonly unknown[], options?: QueryOptions): AsyncIterable<Row>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = any;

interface SqlContext {
  wire: Wire;
  target: Target;
  place: Place;
  defaults: ReadOptions;
  /** In begin(): its signal, for every statement of the transaction that names none. */
  signal?: AbortSignal | undefined;
  /** In begin(): the session's statements, one at a time. */
  inTurn?: InTurn;
}

/**
 * Where a call with `options` runs: the context's place, with the call's authToken if it gives
 * one; refused (never ignored) where it cannot be used.
 */
function placeOf(context: SqlContext, options: QueryOptions): Place {
  if (options.authToken === undefined) return context.place;
  if ('sessionId' in context.place) {
    throw new TypeError('A statement in begin() runs on its session, which takes no authToken');
  }
  return withToken(context.place, options.authToken);
}

/** The target of a call with `options` that cannot run in a session (`refusal` says so). */
function targetOfCall(context: SqlContext, options: QueryOptions, refusal: string): Target {
  if ('sessionId' in context.place) throw new TypeError(refusal);
  return withToken(context.target, options.authToken);
}

/** The read options of a query: its own, then the call's, then the client's. */
function readOptions(own: ReadOptions, ...others: ReadOptions[]): ReadOptions {
  const merged: ReadOptions = {};
  for (const options of [...others].reverse().concat(own)) {
    if (options.arrayMode !== undefined) merged.arrayMode = options.arrayMode;
    if (options.fullResults !== undefined) merged.fullResults = options.fullResults;
    if (options.types !== undefined) merged.types = options.types;
  }
  return merged;
}

function makeSql(context: SqlContext): Sql {
  const { wire, defaults } = context;
  const send = async (query: SqlQuery<Result>): Promise<Result> => {
    const signal = query.options.signal ?? context.signal;
    const place = placeOf(context, query.options);
    const run = () => runStatement(wire, place, query.statement(), signal);
    const result = await (context.inTurn ? context.inTurn(run) : run());
    return readResult(result, readOptions(query.options, defaults));
  };
  const tagged = (strings: TemplateStringsArray, ...values: unknown[]): SqlQuery<Result> => {
    if (!Array.isArray(strings) || !('raw' in strings)) {
      throw new TypeError(
        'The query function is a tagged template (sql`SELECT ${value}`); for text and values call sql.query(text, params)',
      );
    }
    const template = { strings, values };
    return new SqlQuery(
      () => {
        const params: unknown[] = [];
        return statementOf(compileTemplate(template, params), params);
      },
      {},
      send,
      template,
    );
  };
  const sql = tagged as Sql;
  sql.query = (text, params = [], options = {}) => {
    placeOf(context, options);
    return new SqlQuery(() => statementOf(text, params), options, send);
  };
  sql.unsafe = (text) => new UnsafeSql(text);
  sql.transaction = async (queries, options = {}) => {
    const target = targetOfCall(
      context,
      options,
      'transaction() cannot run inside begin(): run the statements in turn',
    );
    const list = typeof queries === 'function' ? queries(sql) : queries;
    if (!Array.isArray(list) || !list.every((query) => query instanceof SqlQuery)) {
      throw new TypeError(
        'transaction() takes a list of queries made by this function (sql`…` or sql.query(…)), or a function returning one',
      );
    }
    const results = await runBatch(
      wire,
      target,
      list.map((query) => query.statement()),
      options,
    );
    return results.map((result, index) =>
      readResult(result, readOptions(list[index]?.options ?? {}, options, defaults)),
    );
  };
  sql.begin = (work, options = {}) => begin(context, work, options);
  sql.stream = (text, params = [], options = {}) => ({
    async *[Symbol.asyncIterator]() {
      const target = targetOfCall(context, options, 'stream() cannot run inside begin()');
      const body = await streamStatement(wire, target, statementOf(text, params), options.signal);
      yield* rowsOf(body, readOptions(options, defaults), (token) => {
        wire.consistencyToken = token;
      });
    },
  });
  return sql;
}

async function begin<T>(
  context: SqlContext,
  work: (tx: Sql) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  const target = targetOfCall(context, options, 'begin() cannot nest: use SAVEPOINT');
  const { wire } = context;
  const sessionId = await openSession(wire, target, options.signal);
  // A page or process that goes away first ends the session then, not at the idle timeout.
  const forget = endAtExit(wire, sessionId);
  try {
    const tx = makeSql({
      ...context,
      place: { sessionId },
      signal: options.signal,
      inTurn: oneAtATime(),
    });
    await tx.query(beginText(options));
    const result = await work(tx);
    // Aborted while the work ran between statements: nothing is committed.
    options.signal?.throwIfAborted();
    const end = (await tx.query('COMMIT', [], { fullResults: true })) as FullQueryResult<unknown>;
    // A statement failed and the work went on: PostgreSQL answers COMMIT with ROLLBACK.
    if (end.command !== 'COMMIT') {
      const failed = new SqlgateError(
        'The transaction had failed: COMMIT rolled it back, and nothing of it was kept',
        200,
      );
      failed.code = '25P02';
      throw failed;
    }
    return result;
  } finally {
    forget();
    // Ending the session rolls back a transaction still open: the work threw, or COMMIT failed.
    await closeSession(wire, sessionId);
  }
}

/** A query function on `target`, through `wire`. @internal */
export function sqlOn(wire: Wire, target: Target, defaults: ReadOptions): Sql {
  return makeSql({ wire, target, place: target, defaults });
}

/** A query function on the options' target, through sqlgate at `url`. */
export function sqlgate(options: SqlgateOptions): Sql {
  const { url, fetch: givenFetch, connectionString, connection, authToken, ...defaults } = options;
  const target = targetOf({ connectionString, connection, authToken });
  return sqlOn(wireTo(url, givenFetch), target, defaults);
}

export type { TypeOverrides };
