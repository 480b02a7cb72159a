/**
 * A pg-compatible `Pool` over sqlgate, so that code written for node-postgres (drizzle-orm's
 * node-postgres driver, Kysely's PostgresDialect) runs over HTTP unchanged, interactive
 * transactions included. `query` runs one statement on the pool's target (target.ts);
 * `connect()` gives a client pinned to a sqlgate session, opened at its first statement and
 * ended by `release()`: what runs on it shares one PostgreSQL connection, as with pg.
 */
import { oneAtATime } from './one-at-a-time';
import { prepareValue } from './parameters';
import { parsedRows, rowObjects } from './results';
import { Cursor } from './cursor';
import { SqlgateError } from './errors';
import { sqlOn, type ClientOptions } from './sql';
import { targetOf, type Target, type TargetOptions } from './target';
import { parserFor, type TypeOverrides, type ValueParser } from './type-parsers';
import {
  closeSession,
  openSession,
  runStatement,
  wireTo,
  type Field,
  type Place,
  type Wire,
} from './wire';

/** pg's custom type parsers (a query's or the pool's `types`). */
export interface CustomTypes {
  getTypeParser(oid: number, format?: string): ValueParser;
}

/** A query as pg takes it: text, or a config object. */
export interface QueryConfig {
  text: string;
  values?: readonly unknown[];
  rowMode?: 'array';
  types?: CustomTypes;
}

/** pg's QueryResult. */
export interface QueryResult<Row = Record<string, unknown>> {
  command: string;
  rowCount: number | null;
  oid: null;
  fields: Field[];
  rows: Row[];
  rowAsArray: boolean;
}

type Callback = (error: Error | null, result?: QueryResult<unknown>) => void;

/** sqlgate's URL, exactly one target (as `sqlgate()` takes them), and the pool's own options. */
export type PoolOptions = Omit<ClientOptions, 'arrayMode' | 'fullResults'> &
  TargetOptions & {
    /** Parsers for every query of the pool, as pg's `types` option. */
    types?: TypeOverrides;
    /**
     * Clients out at once (each a sqlgate session); `connect()` waits past it, as pg's pool does.
     * Default 10, pg's.
     */
    max?: number;
  };

/** pg's `query(text, values)`, `query(config)` and `query(config, values)`, callback or not. */
function configOf(
  textOrConfig: string | QueryConfig,
  valuesOrCallback?: readonly unknown[] | Callback,
): QueryConfig {
  const config = typeof textOrConfig === 'string' ? { text: textOrConfig } : textOrConfig;
  if (!Array.isArray(valuesOrCallback)) return config;
  return { ...config, values: valuesOrCallback };
}

function callbackOf(args: unknown[]): Callback | undefined {
  const last = args.at(-1);
  return typeof last === 'function' ? (last as Callback) : undefined;
}

async function runQuery(
  wire: Wire,
  place: Place,
  config: QueryConfig,
  poolTypes: TypeOverrides | undefined,
): Promise<QueryResult<unknown>> {
  const params = (config.values ?? []).map((value) => prepareValue(value));
  const result = await runStatement(wire, place, { query: config.text, params });
  const parserOf = config.types
    ? (field: Field) => (config.types as CustomTypes).getTypeParser(field.dataTypeID, 'text')
    : (field: Field) => parserFor(field.dataTypeID, poolTypes);
  const arrays = parsedRows(result, parserOf);
  const arrayMode = config.rowMode === 'array';
  return {
    command: result.command,
    rowCount: result.rowCount,
    oid: null,
    fields: result.fields,
    rows: arrayMode ? arrays : rowObjects(result.fields, arrays),
    rowAsArray: arrayMode,
  };
}

/** Settles `work` through `callback` when pg's callback style is used, else returns it. */
function settle(
  work: Promise<QueryResult<unknown>>,
  callback: Callback | undefined,
): Promise<QueryResult<unknown>> | undefined {
  if (!callback) return work;
  work.then(
    (result) => callback(null, result),
    (error: Error) => callback(error),
  );
  return undefined;
}

/** A client of the pool: one sqlgate session, one PostgreSQL connection, until `release()`. */
export class PoolClient {
  private session: Promise<string> | undefined;
  private released = false;
  private readonly inTurn = oneAtATime();

  /** @internal */
  constructor(
    private readonly wire: Wire,
    private readonly target: Target,
    private readonly types: TypeOverrides | undefined,
  ) {}

  query<C extends Cursor>(cursor: C): C;
  query(textOrConfig: string | QueryConfig, ...rest: unknown[]): Promise<QueryResult<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  query(
    textOrConfig: string | QueryConfig | Cursor,
    ...rest: unknown[]
  ): Promise<QueryResult<unknown>> | Cursor | undefined {
    if (textOrConfig instanceof Cursor) return this.openCursor(textOrConfig);
    const config = configOf(textOrConfig, rest[0] as readonly unknown[] | Callback | undefined);
    const work = (async () => {
      if (this.released) throw new Error('Client was released: it cannot run queries');
      this.session ??= openSession(this.wire, this.target);
      const sessionId = await this.session;
      return this.inTurn(() => runQuery(this.wire, { sessionId }, config, this.types));
    })();
    return settle(work, callbackOf(rest));
  }

  /**
   * A cursor's rows, streamed from the target. Only before the client's first statement: after
   * it, the client is a session, and rows read beside it would not see its transaction.
   */
  private openCursor(cursor: Cursor): Cursor {
    if (this.released)
      return cursor.refuse(new Error('Client was released: it cannot run queries'));
    if (this.session) {
      return cursor.refuse(
        new SqlgateError(
          'A Pool client that has run a statement is a session, which cannot stream: use another client (pool.connect())',
          undefined,
        ),
      );
    }
    const { text, values, config } = cursor;
    const sql = sqlOn(this.wire, this.target, this.types ? { types: this.types } : {});
    return cursor.open(sql.stream(text, values, { arrayMode: config.rowMode === 'array' }));
  }

  /** Ends the session: a transaction left open is rolled back (pg would destroy the connection). */
  release(): void {
    if (this.released) return;
    this.released = true;
    void this.session?.then(
      (sessionId) => closeSession(this.wire, sessionId),
      () => undefined,
    );
  }
}

/** pg's Pool, over sqlgate. */
export class Pool {
  private readonly wire: Wire;
  private readonly target: Target;
  private readonly clients = new Set<PoolClient>();
  /** connect() calls waiting for a client to be released, first come first served. */
  private readonly waiting: (() => void)[] = [];
  private readonly max: number;
  private ended = false;

  constructor(private readonly options: PoolOptions) {
    this.wire = wireTo(options.url, options.fetch);
    this.target = targetOf(options);
    this.max = options.max ?? 10;
  }

  /** Clients out now (pg's totalCount; this pool keeps none idle). */
  get totalCount(): number {
    return this.clients.size;
  }

  /** Always 0: a released client's session is ended, not kept. */
  get idleCount(): number {
    return 0;
  }

  /** connect() calls waiting for a client. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  query(textOrConfig: string | QueryConfig, ...rest: unknown[]): Promise<QueryResult<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  query(
    textOrConfig: string | QueryConfig,
    ...rest: unknown[]
  ): Promise<QueryResult<unknown>> | undefined {
    const config = configOf(textOrConfig, rest[0] as readonly unknown[] | Callback | undefined);
    const work = this.ended
      ? Promise.reject(new Error('Cannot use a pool after calling end on the pool'))
      : runQuery(this.wire, this.target, config, this.options.types);
    return settle(work, callbackOf(rest));
  }

  /** A client pinned to one session; with a callback, pg's `(error, client, release)` style. */
  connect(): Promise<PoolClient>;
  connect(callback: (error: Error | null, client?: PoolClient, release?: () => void) => void): void;
  connect(
    callback?: (error: Error | null, client?: PoolClient, release?: () => void) => void,
  ): Promise<PoolClient> | void {
    const connecting = this.checkOut();
    if (!callback) return connecting;
    connecting.then(
      (client) => callback(null, client, () => client.release()),
      (error: Error) => callback(error),
    );
  }

  private async checkOut(): Promise<PoolClient> {
    if (this.ended) throw new Error('Cannot use a pool after calling end on the pool');
    while (this.clients.size >= this.max) {
      await new Promise<void>((wake) => this.waiting.push(wake));
      if (this.ended) throw new Error('Cannot use a pool after calling end on the pool');
    }
    const client = new PoolClient(this.wire, this.target, this.options.types);
    const release = client.release.bind(client);
    client.release = () => {
      if (this.clients.delete(client)) this.waiting.shift()?.();
      release();
    };
    this.clients.add(client);
    return client;
  }

  /** Releases every client still out and wakes every waiting connect(); no query runs afterwards. */
  async end(): Promise<void> {
    this.ended = true;
    for (const client of [...this.clients]) client.release();
    for (const wake of this.waiting.splice(0)) wake();
  }

  /**
   * pg's pool emits `error` for a connection that fails while idle; this pool holds no
   * connection between requests, so it has nothing to emit. Accepted for code that listens.
   */
  on(_event: string, _listener: (...args: unknown[]) => void): this {
    return this;
  }
}
