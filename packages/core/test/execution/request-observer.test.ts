/**
 * What the service tells a request's observer (docs/decisions.md 10.25): parsing, pool waits and
 * each statement's outcome with what the result cache did, over the in-memory fake provider.
 */
import { MemoryCacheStore } from '../../src/cache';
import { ConnectionError, ErrorCodes } from '../../src/errors';
import type { CacheStore } from '../../src/ports/cache-store';
import type {
  ParseEvent,
  PoolAcquireEvent,
  RequestFailureEvent,
  RequestObserver,
  StatementEvent,
} from '../../src/ports/request-observer';
import { connectionLost, databaseError } from '../fakes/fake-connections';
import { failingStore } from './cache-support';
import { harness } from './service-harness';

function recorder(): RequestObserver & {
  parses: ParseEvent[];
  acquires: PoolAcquireEvent[];
  statements: StatementEvent[];
  failures: RequestFailureEvent[];
} {
  const parses: ParseEvent[] = [];
  const acquires: PoolAcquireEvent[] = [];
  const statements: StatementEvent[] = [];
  const failures: RequestFailureEvent[] = [];
  return {
    parses,
    acquires,
    statements,
    failures,
    parsed: (event) => parses.push(event),
    poolAcquired: (event) => acquires.push(event),
    statementEnded: (event) => statements.push(event),
    requestFailed: (event) => failures.push(event),
  };
}

const cached = { cache: { ttlMs: 60_000 } };

describe('the request observer', () => {
  it('hears the parse, each acquire and each statement, with times in order', async () => {
    const { fake, query } = harness();
    fake.on('SELECT 1', { rows: [{ a: 1 }] });
    fake.on("UPDATE t SET a = 'secret'", { command: 'UPDATE', rowCount: 1 });
    const observer = recorder();

    await query("SELECT 1; UPDATE t SET a = 'secret'", {}, { observer });

    expect(observer.parses).toEqual([
      { startMs: expect.any(Number), endMs: expect.any(Number), statements: 2 },
    ]);
    expect(observer.acquires).toHaveLength(1);
    expect(observer.acquires[0]?.failureCode).toBeUndefined();
    expect(observer.statements.map((event) => [event.index, event.command, event.outcome])).toEqual(
      [
        [0, 'SELECT', 'ok'],
        [1, 'UPDATE', 'ok'],
      ],
    );
    const [first, second] = observer.statements;
    expect(first?.strategy).toBe('transaction');
    expect(second?.normalisedText).toBe('UPDATE t SET a = $1');
    expect(first?.startMs).toBeGreaterThanOrEqual(observer.acquires[0]?.endMs as number);
    expect(second?.startMs).toBeGreaterThanOrEqual(first?.startMs as number);
  });

  it('names a failed statement’s SQLSTATE and the statements not run after it', async () => {
    const { fake, query } = harness();
    fake.on('SELECT * FROM nope', {
      error: databaseError('42P01', 'relation "nope" does not exist'),
    });
    const observer = recorder();

    await query('SELECT * FROM nope; UPDATE t SET a = 1', {}, { observer });

    expect(
      observer.statements.map((event) => [event.outcome, event.sqlState, event.errorCode]),
    ).toEqual([
      ['error', '42P01', 'DATABASE_ERROR'],
      ['not_run', undefined, undefined],
    ]);
    expect(observer.statements[1]?.cache).toBeUndefined();
  });

  it('reports a pool that has no connection to lend', async () => {
    const { fake, query } = harness();
    fake.onAcquire({
      error: new ConnectionError(ErrorCodes.POOL_EXHAUSTED, 'no free connection', 'POOL_EXHAUSTED'),
    });
    const observer = recorder();

    await query('SELECT 1', {}, { observer });

    expect(observer.acquires).toEqual([
      expect.objectContaining({ failureCode: 'POOL_EXHAUSTED', timedOut: true }),
    ]);
    expect(observer.statements.map((event) => event.outcome)).toEqual(['not_run']);
  });
});

describe('failures no statement carries', () => {
  it('reports a COMMIT that fails with its SQLSTATE', async () => {
    const { fake, query } = harness();
    fake.on('COMMIT', {
      error: databaseError('23503', 'insert or update violates foreign key constraint'),
    });
    const observer = recorder();

    await query('INSERT INTO child VALUES (1); INSERT INTO child VALUES (2)', {}, { observer });

    expect(observer.failures).toEqual([
      { step: 'commit', errorCode: 'DATABASE_ERROR', sqlState: '23503' },
    ]);
  });

  it('reports a connection lost inside the transaction, but not one never had', async () => {
    const lost = harness();
    lost.fake.on('BEGIN', { error: connectionLost() });
    const lostObserver = recorder();
    await lost.query(
      'INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)',
      {},
      {
        observer: lostObserver,
      },
    );
    expect(lostObserver.failures).toEqual([{ step: 'request', errorCode: 'CONNECTION_FAILED' }]);

    const refused = harness();
    refused.fake.onAcquire({
      error: new ConnectionError(ErrorCodes.CONNECTION_FAILED, 'refused', 'ECONNREFUSED'),
    });
    const refusedObserver = recorder();
    await refused.query('INSERT INTO t VALUES (1)', {}, { observer: refusedObserver });
    expect(refusedObserver.acquires[0]?.failureCode).toBe('CONNECTION_FAILED');
    expect(refusedObserver.failures).toEqual([]);
  });
});

describe('what the cache did, per statement', () => {
  async function cacheOf(
    sql: string,
    fields: Record<string, unknown>,
    setup: (fake: ReturnType<typeof harness>['fake']) => void = () => undefined,
    store: CacheStore = new MemoryCacheStore(),
    options: { cacheMaxEntryBytes?: number } = {},
  ) {
    const { fake, query } = harness({ cacheStore: store, ...options });
    setup(fake);
    const observer = recorder();
    await query(sql, fields, { observer });
    return observer.statements.map((event) => event.cache);
  }

  it('misses, then hits', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on('SELECT a FROM t', { rows: [{ a: 1 }] });
    const first = recorder();
    const second = recorder();
    await query('SELECT a FROM t', cached, { observer: first });
    await query('SELECT a FROM t', cached, { observer: second });
    expect(first.statements[0]?.cache).toEqual({ status: 'miss' });
    expect(second.statements[0]?.cache).toEqual({ status: 'hit' });
    expect(second.statements[0]?.outcome).toBe('cached');
  });

  it.each([
    ['a request that does not ask', 'SELECT a FROM t', {}, 'disabled'],
    ['a volatile read', 'SELECT random()', cached, 'volatile'],
    ['a write', 'UPDATE t SET a = 1', cached, 'write'],
  ])('bypasses for %s', async (_name, sql, fields, reason) => {
    expect(await cacheOf(sql, fields)).toEqual([{ status: 'bypass', reason }]);
  });

  it('bypasses the read of a request that also writes, for the transaction', async () => {
    expect(await cacheOf('SELECT a FROM t; UPDATE t SET a = 1', cached)).toEqual([
      { status: 'bypass', reason: 'transaction' },
      { status: 'bypass', reason: 'write' },
    ]);
  });

  it('bypasses a result over the byte bound', async () => {
    const rows = [{ payload: 'x'.repeat(1000) }];
    expect(
      await cacheOf(
        'SELECT payload FROM t',
        cached,
        (fake) => fake.on('SELECT payload FROM t', { rows }),
        new MemoryCacheStore(),
        { cacheMaxEntryBytes: 100 },
      ),
    ).toEqual([{ status: 'bypass', reason: 'oversize' }]);
  });

  it('bypasses when the store fails, and the query still answers', async () => {
    const failing = failingStore();
    expect(await cacheOf('SELECT a FROM t', cached, undefined, failing)).toEqual([
      { status: 'bypass', reason: 'unavailable' },
    ]);
  });

  it('names no cache at all as disabled', async () => {
    const { query } = harness();
    const observer = recorder();
    await query('SELECT a FROM t', cached, { observer });
    expect(observer.statements[0]?.cache).toEqual({ status: 'bypass', reason: 'disabled' });
  });
});
