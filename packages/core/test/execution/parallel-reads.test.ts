/**
 * Independent reads at once, each on its own connection in a READ ONLY transaction that ends in the
 * same round trip (docs/decisions.md 2.2); a failure is a 400 whatever its SQLSTATE (section 5).
 */
import { MemoryCacheStore } from '../../src/cache';
import { ErrorCodes } from '../../src/errors';
import { connectionLost, databaseError, fakeTarget } from '../fakes/fake-connections';
import type { QueryServiceResponse } from '../../src/service';
import { harness } from './service-harness';

const READS = 'SELECT * FROM a; SELECT * FROM b; SELECT * FROM c';

/** The answer of READS when each read returned one row naming its table. */
function expectEveryRead(response: QueryServiceResponse): void {
  expect(response.failure).toBeUndefined();
  expect(response.body).toMatchObject({
    multipleResults: true,
    results: [
      { rows: [{ from: 'a' }], statement: 'SELECT * FROM a;' },
      { rows: [{ from: 'b' }] },
      { rows: [{ from: 'c' }], statement: 'SELECT * FROM c' },
    ],
    totalExecutionTime: expect.any(Number),
  });
}

describe('the parallel-reads strategy', () => {
  it('keeps the statement order whatever order the reads finish in', async () => {
    const { fake, query } = harness();
    fake
      .on('SELECT * FROM a', { rows: [{ from: 'a' }], delayMs: 30 })
      .on('SELECT * FROM b', { rows: [{ from: 'b' }], delayMs: 10 })
      .on('SELECT * FROM c', { rows: [{ from: 'c' }] });

    const response = await query(READS);

    expectEveryRead(response);
    // docs/decisions.md 2.2: the parallel-read response has no transactionUsed.
    expect(response.body).not.toHaveProperty('transactionUsed');
    // c finished first, a last: they did run at the same time.
    expect(fake.sent().filter((sql) => sql.startsWith('SELECT'))).toEqual([
      'SELECT * FROM c',
      'SELECT * FROM b',
      'SELECT * FROM a',
    ]);
  });

  it('opens BEGIN READ ONLY and ends with COMMIT in the same round trip, one connection each', async () => {
    const { fake, query } = harness();
    fake.on(/^SELECT/, { delayMs: 5 });

    await query(READS);

    const batches = fake.callsOf('runBatch');
    expect(batches).toHaveLength(3);
    for (const batch of batches) {
      expect(batch.sql).toHaveLength(1);
      expect(batch.options).toMatchObject({
        before: ['BEGIN READ ONLY'],
        after: ['COMMIT'],
        // Reads of tables run to their end: a table may be a view calling a side-effecting function.
        stopEarly: [false],
        // Reads all the same: the adapter may name a lone one (docs/decisions.md 10.30).
        nameable: [true],
      });
    }
    expect(new Set(batches.map((batch) => batch.connection)).size).toBe(3);
    expect(fake.callsOf('run')).toEqual([]);
    expect(fake.releases().map((call) => call.options)).toEqual(
      Array(3).fill({ destroy: false, resetSession: false }),
    );
  });

  it('runs at most maxParallelReads reads at once', async () => {
    const { fake, query } = harness({ maxParallelReads: 2 });
    fake.on(/^SELECT/, { delayMs: 10 });

    await query('SELECT 1; SELECT 2; SELECT 3; SELECT 4; SELECT 5');

    expect(fake.callsOf('runBatch')).toHaveLength(5);
    expect(fake.maxLent).toBe(2);
  });

  it('answers one failing read with a 400-shaped failure listing every result', async () => {
    const { fake, query } = harness();
    fake.on('SELECT * FROM b', { error: databaseError('40001', 'could not serialize access') });

    const response = await query(READS);

    expect(response.body).toMatchObject({
      multipleResults: true,
      error: 'One or more statements failed',
      failedStatementIndex: 1,
      results: [
        { statement: 'SELECT * FROM a;' },
        { error: 'could not serialize access', cause: { code: '40001', statementIndex: 1 } },
        { statement: 'SELECT * FROM c' },
      ],
    });
    // No SQLSTATE: a database error on the parallel path is a 400, even 40001 (otherwise 409).
    expect(response.failure).toEqual({ code: ErrorCodes.DATABASE_ERROR });
    // The failed read's transaction was rolled back on its connection.
    const failedOn = fake.callsOf('runBatch').find((call) => call.sql[0] === 'SELECT * FROM b');
    expect(fake.sent(failedOn?.connection)).toEqual([
      'BEGIN READ ONLY',
      'SELECT * FROM b',
      'ROLLBACK',
    ]);
  });

  it('answers a read that lost its connection by the connection failure', async () => {
    const { fake, query } = harness();
    fake.on('SELECT * FROM c', { error: connectionLost() });

    const response = await query(READS);

    // Reads commit nothing: the request answers as a lost connection, without the other results.
    expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
    expect(response.body).toEqual({
      error: { message: 'Connection terminated unexpectedly', code: 'ECONNRESET' },
    });
    expect(fake.releases().filter((call) => call.options.destroy)).toHaveLength(1);
  });

  it('applies timeoutMs and the isolation level to every read', async () => {
    const { fake, query } = harness();

    await query(READS, { timeoutMs: 100, isolationLevel: 'serializable' });

    for (const batch of fake.callsOf('runBatch')) {
      expect(batch.options).toMatchObject({
        before: [
          'BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY',
          'SET LOCAL statement_timeout = 100',
        ],
        silenceLimitMs: 2100,
      });
    }
  });

  it('serves cached reads from the cache and runs only the others', async () => {
    const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
    fake.on('SELECT * FROM a', { rows: [{ from: 'a' }] });
    await query('SELECT * FROM a', { cache: true });

    const response = await query(READS, { cache: true });

    expect(response.body).toMatchObject({
      results: [{ rows: [{ from: 'a' }], cached: true }, {}, {}],
    });
    expect(fake.sent().filter((sql) => sql === 'SELECT * FROM a')).toHaveLength(1);
    expect(fake.callsOf('runBatch').map((call) => call.sql)).toEqual([
      ['SELECT * FROM b'],
      ['SELECT * FROM c'],
    ]);
  });

  it('stops taking connections once the caller went away', async () => {
    const { fake, query } = harness({ maxParallelReads: 1 });
    const controller = new AbortController();
    fake.on('SELECT * FROM a', { delayMs: 10_000 });

    const pending = query(READS, {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const response = await pending;

    expect(fake.callsOf('cancel')).toHaveLength(1);
    expect(fake.callsOf('acquire')).toHaveLength(1);
    expect(fake.sent()).toEqual(['BEGIN READ ONLY', 'SELECT * FROM a', 'ROLLBACK']);
    // The read that ran keeps its answer; the others were never sent.
    expect(response.body).toMatchObject({
      multipleResults: true,
      error: 'The caller went away; the statements after it were not sent',
      results: [{ cause: { code: '57014', statementIndex: 0 } }],
    });
    expect((response.body as { results: unknown[] }).results).toHaveLength(1);
    expect(response.failure).toEqual({ code: ErrorCodes.REQUEST_ABORTED });
  });

  describe('when the pool cannot lend a connection per read (docs/decisions.md 10.29)', () => {
    it('runs the reads in turn on one connection, together in one READ ONLY round trip', async () => {
      const { fake, query } = harness();
      fake.spare = 2;
      fake
        .on('SELECT * FROM a', { rows: [{ from: 'a' }] })
        .on('SELECT * FROM b', { rows: [{ from: 'b' }] })
        .on('SELECT * FROM c', { rows: [{ from: 'c' }] });

      const response = await query(READS);

      expectEveryRead(response);
      // The answer is the parallel path's: no transactionUsed.
      expect(response.body).not.toHaveProperty('transactionUsed');
      const batches = fake.callsOf('runBatch');
      expect(batches.map((batch) => batch.sql)).toEqual([
        ['SELECT * FROM a', 'SELECT * FROM b', 'SELECT * FROM c'],
      ]);
      expect(batches[0]?.options).toMatchObject({
        before: ['BEGIN READ ONLY'],
        after: ['COMMIT'],
      });
      expect(fake.callsOf('acquire')).toHaveLength(1);
      expect(fake.releases()).toHaveLength(1);
    });

    it('keeps a transaction per read at REPEATABLE READ, where one would share a snapshot', async () => {
      const { fake, query } = harness();
      fake.spare = 0;

      await query(READS, { isolationLevel: 'repeatable read' });

      const batches = fake.callsOf('runBatch');
      expect(batches.map((batch) => batch.sql)).toEqual([
        ['SELECT * FROM a'],
        ['SELECT * FROM b'],
        ['SELECT * FROM c'],
      ]);
      expect(new Set(batches.map((batch) => batch.connection)).size).toBe(1);
    });

    it('fails every read of the round trip with a COMMIT that failed, as each would with its own', async () => {
      const { fake, query } = harness();
      fake.spare = 0;
      fake.on('COMMIT', { error: databaseError('40001', 'could not serialize access') });

      const response = await query(READS);

      expect(fake.callsOf('runBatch')).toHaveLength(1);
      expect(response.body).toMatchObject({
        results: [
          { cause: { code: '40001' } },
          { cause: { code: '40001' } },
          { cause: { code: '40001' } },
        ],
      });
    });

    it('still takes a connection per read when the pool has one for each', async () => {
      const { fake, query } = harness();
      fake.spare = 3;

      await query(READS);

      expect(new Set(fake.callsOf('runBatch').map((batch) => batch.connection)).size).toBe(3);
    });

    it('gives each read the outcome it would have alone: the reads a failure skipped go out again', async () => {
      const { fake, query } = harness();
      fake.spare = 0;
      fake
        .on('SELECT * FROM a', { rows: [{ from: 'a' }] })
        .on('SELECT * FROM b', { error: databaseError('22012', 'division by zero') })
        .on('SELECT * FROM c', { rows: [{ from: 'c' }] });

      const response = await query(READS);

      // The answer of the parallel path for the same failure.
      expect(response.body).toMatchObject({
        multipleResults: true,
        error: 'One or more statements failed',
        failedStatementIndex: 1,
        results: [
          { rows: [{ from: 'a' }] },
          { error: 'division by zero', cause: { code: '22012', statementIndex: 1 } },
          { rows: [{ from: 'c' }] },
        ],
      });
      expect(response.failure).toEqual({ code: ErrorCodes.DATABASE_ERROR });
      // The server skipped c after b failed: c alone runs again, after the rollback; a and b once.
      expect(fake.sent()).toEqual([
        'BEGIN READ ONLY',
        'SELECT * FROM a',
        'SELECT * FROM b',
        'ROLLBACK',
        'BEGIN READ ONLY',
        'SELECT * FROM c',
        'COMMIT',
      ]);
    });

    it('gives the reads after one that broke the connection another connection', async () => {
      const { fake, query } = harness();
      fake.spare = 0;
      fake
        .on('SELECT * FROM a', { rows: [{ from: 'a' }] })
        .on('SELECT * FROM b', {
          error: databaseError('57P01', 'terminating connection due to administrator command', {
            severity: 'FATAL',
          }),
        })
        .on('SELECT * FROM c', { rows: [{ from: 'c' }] });

      const response = await query(READS);

      expect(response.body).toMatchObject({
        results: [
          { rows: [{ from: 'a' }] },
          { cause: { code: '57P01' } },
          { rows: [{ from: 'c' }] },
        ],
      });
      const batches = fake.callsOf('runBatch');
      expect(batches.map((batch) => batch.sql)).toEqual([
        ['SELECT * FROM a', 'SELECT * FROM b', 'SELECT * FROM c'],
        ['SELECT * FROM c'],
      ]);
      expect(batches[1]?.connection).not.toBe(batches[0]?.connection);
      expect(fake.releases().map((call) => call.options.destroy)).toEqual([true, false]);
    });

    it('answers a lost connection as the parallel path does', async () => {
      const { fake, query } = harness();
      fake.spare = 0;
      fake.on('SELECT * FROM b', { error: connectionLost() });

      const response = await query(READS);

      expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
      expect(response.body).toEqual({
        error: { message: 'Connection terminated unexpectedly', code: 'ECONNRESET' },
      });
      expect(fake.releases().map((call) => call.options.destroy)).toEqual([true]);
    });

    it('keeps the answers of the reads that ran when the request is cancelled', async () => {
      const { fake, query, service } = harness();
      fake.spare = 0;
      fake
        .on('SELECT * FROM a', { rows: [{ from: 'a' }] })
        .on('SELECT * FROM b', { delayMs: 10_000 });

      const pending = query(READS, {}, { requestId: 'busy-cancel' });
      setTimeout(() => service.cancelRequest('busy-cancel', fakeTarget), 50);
      const response = await pending;

      expect(response.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
      expect(response.body).toMatchObject({
        multipleResults: true,
        cancelled: true,
        results: [{ rows: [{ from: 'a' }] }, { cause: { code: '57014' } }],
      });
      expect(fake.sent()).not.toContain('SELECT * FROM c');
    });

    it('serves cached reads from the cache and runs the others', async () => {
      const { fake, query } = harness({ cacheStore: new MemoryCacheStore() });
      fake.on('SELECT * FROM b', { rows: [{ from: 'b' }] });
      await query('SELECT * FROM b', { cache: true });
      fake.spare = 1;

      const response = await query(READS, { cache: true });

      expect(response.body).toMatchObject({
        results: [
          { cacheStatus: 'miss' },
          { rows: [{ from: 'b' }], cached: true },
          { cacheStatus: 'miss' },
        ],
      });
      expect(fake.callsOf('runBatch').map((call) => call.sql)).toEqual([
        ['SELECT * FROM a'],
        ['SELECT * FROM c'],
      ]);
      // The reads that ran were kept: the same request is now answered from the cache alone.
      const again = await query(READS, { cache: true });
      expect(again.body).toMatchObject({
        results: [{ cached: true }, { cached: true }, { cached: true }],
      });
      expect(fake.callsOf('runBatch')).toHaveLength(2);
    });
  });
});
