/**
 * Failures travel as values from the port to the response (docs/decisions.md 10.21): every way a
 * strategy can fail before or around its statements is answered by that failure's own error, and
 * only a defect (a port call that rejects) becomes a 500 that closes the connection.
 */
import { ConnectionError, ErrorCodes, RequestError } from '../../src/errors';
import { connectionLost, databaseError } from '../fakes/fake-connections';
import { harness } from './service-harness';

const poolExhausted = () =>
  new ConnectionError(ErrorCodes.POOL_EXHAUSTED, 'No connection became free', 'POOL_EXHAUSTED');

describe('failures as values', () => {
  it.each([
    ['single', 'SELECT 1'],
    ['in order', 'BEGIN; INSERT INTO t VALUES (1); COMMIT'],
    ['transaction', 'INSERT INTO t VALUES (1); UPDATE t SET a = 2'],
    ['parallel reads', 'SELECT 1; SELECT 2'],
  ])('%s: no connection to be had is answered by the provider’s error', async (_name, sql) => {
    const { fake, query } = harness();
    fake.onAcquire({ error: poolExhausted() }).onAcquire({ error: poolExhausted() });

    const response = await query(sql);

    expect(response.body).toEqual({
      error: { message: 'No connection became free', code: 'POOL_EXHAUSTED' },
    });
    expect(response.failure).toEqual({ code: ErrorCodes.POOL_EXHAUSTED });
    expect(fake.sent()).toEqual([]);
  });

  it.each([
    ['single', 'SELECT 1'],
    ['in order', 'BEGIN; INSERT INTO t VALUES (1); COMMIT'],
  ])(
    '%s: a refused SET statement_timeout is the answer, and nothing else is sent',
    async (_n, sql) => {
      const { fake, query } = harness();
      fake.on(/^SET statement_timeout/, { error: databaseError('42501', 'permission denied') });

      const response = await query(sql, { timeoutMs: 1000 });

      expect(response.failure).toEqual({ code: ErrorCodes.DATABASE_ERROR, sqlState: '42501' });
      expect(response.body).toMatchObject({
        error: { code: '42501', message: 'permission denied' },
      });
      expect(fake.sent()).toEqual(['SET statement_timeout = 1000']);
    },
  );

  it('transaction: a connection lost inside it is answered by that loss, nothing committed', async () => {
    const { fake, query } = harness();
    fake.on('UPDATE t SET a = 2', { error: connectionLost() });

    const response = await query('INSERT INTO t VALUES (1); UPDATE t SET a = 2');

    expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
    expect(response.body).toEqual({
      error: { message: 'Connection terminated unexpectedly', code: 'ECONNRESET' },
    });
    expect(fake.sent()).not.toContain('COMMIT');
    expect(fake.releases()[0]?.options).toMatchObject({ destroy: true });
  });

  it('transaction: a connection lost during COMMIT says the outcome is unknown', async () => {
    const { fake, query } = harness();
    fake.on('COMMIT', { error: connectionLost() });

    const response = await query('INSERT INTO t VALUES (1); UPDATE t SET a = 2');

    expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
    expect(response.body).toMatchObject({
      error: { message: expect.stringContaining('whether the transaction committed is unknown') },
    });
  });

  it('transaction: parameters the adapter could not send are a 400, nothing committed', async () => {
    const { fake, query } = harness();
    fake.on('INSERT INTO t VALUES ($1)', {
      error: new RequestError(ErrorCodes.INVALID_REQUEST, "'params' could not be sent: bad"),
    });

    const response = await query('INSERT INTO t VALUES ($1)', { params: [1], dryRun: true });

    expect(response.failure).toEqual({ code: ErrorCodes.INVALID_REQUEST });
    expect(response.body).toEqual({ error: "'params' could not be sent: bad" });
    expect(fake.sent()).toEqual([]);
    expect(fake.releases()[0]?.options).toEqual({ destroy: false, resetSession: false });
  });

  it('single: parameters that could not be sent fail the statement with sqlgate’s code', async () => {
    const { fake, query } = harness();
    fake.on('SELECT $1::int', {
      error: new RequestError(ErrorCodes.INVALID_REQUEST, "'params' could not be sent: bad"),
    });

    const response = await query('SELECT $1::int', { params: [1] });

    expect(response.failure).toEqual({ code: ErrorCodes.INVALID_REQUEST });
    expect(response.body).toMatchObject({
      error: { message: "'params' could not be sent: bad", code: 'INVALID_REQUEST' },
    });
  });

  it('a port call that rejects is a defect: 500 without its detail, the connection closed', async () => {
    const { fake, query } = harness();
    fake.on('SELECT 1', { error: new TypeError('a bug in an adapter') });

    const response = await query('SELECT 1');

    expect(response.failure).toMatchObject({ code: ErrorCodes.INTERNAL_ERROR });
    expect(JSON.stringify(response.body)).not.toContain('a bug in an adapter');
    expect(fake.releases()[0]?.options).toMatchObject({ destroy: true });
  });

  it('a port call that throws before returning a promise is a defect too', async () => {
    const { fake, query } = harness();
    const acquire = fake.acquire.bind(fake);
    fake.acquire = async (...args) => {
      const acquired = await acquire(...args);
      if (acquired.ok) {
        acquired.value.run = () => {
          throw new TypeError('a synchronous bug in an adapter');
        };
      }
      return acquired;
    };

    const response = await query('SELECT 1');

    expect(response.failure).toMatchObject({ code: ErrorCodes.INTERNAL_ERROR });
    expect(fake.releases()[0]?.options).toMatchObject({ destroy: true });
  });

  it('an acquire that rejects is a defect: 500, nothing lent', async () => {
    const { fake, query } = harness();
    fake.acquire = () => Promise.reject(new TypeError('a bug in a pool'));

    const response = await query('INSERT INTO t VALUES (1); UPDATE t SET a = 2');

    expect(response.failure).toMatchObject({ code: ErrorCodes.INTERNAL_ERROR });
    expect(fake.lentCount()).toBe(0);
  });

  it('parallel reads start no read after one could not start', async () => {
    const { fake, query } = harness({ maxParallelReads: 1 });
    fake.onAcquire({ error: poolExhausted() });

    const response = await query('SELECT 1; SELECT 2; SELECT 3');

    expect(response.failure).toEqual({ code: ErrorCodes.POOL_EXHAUSTED });
    expect(fake.callsOf('acquire')).toHaveLength(1);
  });

  it('parallel reads: a statement timeout keeps its own status (57014), as everywhere', async () => {
    const { fake, query } = harness();
    fake.on('SELECT 2', {
      error: databaseError('57014', 'canceling statement due to statement timeout'),
    });

    const response = await query('SELECT 1; SELECT 2', { timeoutMs: 500 });

    expect(response.failure).toEqual({ code: ErrorCodes.DATABASE_ERROR, sqlState: '57014' });
    expect(response.body).toMatchObject({ failedStatementIndex: 1 });
  });

  it('execute refuses a COPY TO STDOUT: only a streamed answer can carry its data', async () => {
    const { fake, query } = harness();

    const response = await query('COPY (SELECT 1) TO STDOUT');

    expect(response.failure).toEqual({ code: ErrorCodes.UNSUPPORTED_STATEMENT });
    expect(fake.calls).toEqual([]);
  });
});
