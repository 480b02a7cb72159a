/**
 * Borrowing and returning connections: acquire failures, a caller leaving while waiting for one,
 * and which requests leave a session that must be cleaned before reuse (docs/decisions.md 2.6, 10.15).
 */
import { ConnectionError, ErrorCodes } from '../../src/errors';
import { databaseError } from '../fakes/fake-connections';
import { harness, sleep } from './service-harness';

describe('acquiring a connection', () => {
  it('answers a target that cannot be reached with a 502-shaped body and sends nothing', async () => {
    const { fake, query } = harness();
    fake.onAcquire({
      error: new ConnectionError(
        ErrorCodes.CONNECTION_FAILED,
        'connect ECONNREFUSED 10.0.0.1:5432',
        'ECONNREFUSED',
      ),
    });

    const response = await query('SELECT 1');

    expect(response.body).toEqual({
      error: { message: 'connect ECONNREFUSED 10.0.0.1:5432', code: 'ECONNREFUSED' },
    });
    expect(response.failure).toEqual({ code: ErrorCodes.CONNECTION_FAILED });
    expect(fake.sent()).toEqual([]);
  });

  it('answers a login the server refused with a QueryErrorObject and its SQLSTATE', async () => {
    const { fake, query } = harness();
    fake.onAcquire({
      error: databaseError('28P01', 'password authentication failed for user "tester"', {
        severity: 'FATAL',
      }),
    });

    const response = await query('SELECT 1; SELECT 2');

    expect(response.body).toEqual({
      error: {
        message: 'password authentication failed for user "tester"',
        code: '28P01',
        severity: 'FATAL',
        executionTime: expect.any(Number),
      },
    });
    expect(response.failure).toEqual({ code: ErrorCodes.DATABASE_ERROR, sqlState: '28P01' });
  });

  it('gives up waiting for a connection when the caller goes away, and sends nothing', async () => {
    const { fake, query } = harness();
    fake.onAcquire({ waitForAbort: true });
    const controller = new AbortController();

    const pending = query('INSERT INTO t VALUES (1)', {}, { signal: controller.signal });
    await sleep(10);
    controller.abort();
    const response = await pending;

    expect(fake.callsOf('acquire')).toEqual([expect.objectContaining({ withSignal: true })]);
    expect(fake.connections).toEqual([]);
    expect(fake.sent()).toEqual([]);
    // Nobody is there to read it; the log says why the request ended.
    expect(response.body).toEqual({ error: 'The request was aborted by the caller' });
    expect(response.failure).toEqual({ code: ErrorCodes.REQUEST_ABORTED });
  });

  it('does not even ask for a connection when the caller is already gone', async () => {
    const { fake, query } = harness();
    const controller = new AbortController();
    controller.abort();

    const response = await query('SELECT 1', {}, { signal: controller.signal });

    expect(fake.calls).toEqual([]);
    expect(response.body).toEqual({ error: 'The request was aborted by the caller' });
    expect(response.failure).toEqual({ code: ErrorCodes.REQUEST_ABORTED });
  });

  it('counts the time spent waiting for the pool', async () => {
    const { fake, query } = harness();
    fake.onAcquire({ delayMs: 25 });
    const response = await query('SELECT 1');
    expect(response.timings.poolWaitMs).toBeGreaterThanOrEqual(20);
    expect(response.timings.executionMs).toBeGreaterThanOrEqual(response.timings.poolWaitMs);
  });
});

describe('returning a connection', () => {
  const resetOf = async (
    sql: string,
    options: Parameters<typeof harness>[0] = {},
  ): Promise<boolean | undefined> => {
    const { fake, query } = harness(options);
    await query(sql);
    return fake.releases()[0]?.options.resetSession;
  };

  it('returns it as it is after plain reads and writes', async () => {
    expect(await resetOf('SELECT * FROM t')).toBe(false);
    expect(await resetOf('UPDATE t SET a = 1')).toBe(false);
  });

  it('cleans it after a statement that changes the session', async () => {
    expect(await resetOf("SET search_path = 'elsewhere'")).toBe(true);
    expect(await resetOf('SELECT set_config($$a.b$$, $$c$$, false)')).toBe(true);
  });

  it(
    // Bug (parser, not execution): DO, CALL and calls of user-defined functions are classified
    // without changesSession, so their connection goes back to the pool uncleaned, although they
    // can SET, take advisory locks or create temp tables (docs/decisions.md 10.15).
    'cleans it after DO, CALL and calls of user-defined functions',
    async () => {
      expect(await resetOf('DO $$ BEGIN END $$')).toBe(true);
      expect(await resetOf('CALL do_things()')).toBe(true);
      expect(await resetOf('SELECT my_function()')).toBe(true);
    },
  );

  it('cleans it after every request with alwaysResetSession', async () => {
    expect(await resetOf('SELECT * FROM t', { alwaysResetSession: true })).toBe(true);
  });

  it('cleans it when a transaction is still open at release', async () => {
    const { fake, query } = harness();
    // A function opened a transaction, and the ROLLBACK sqlgate sends for it fails.
    fake.on('SELECT opens_one()', { status: 'in-transaction' });
    fake.on('ROLLBACK', {
      error: databaseError('XX000', 'rollback failed'),
      status: 'in-transaction',
    });

    const response = await query('SELECT opens_one()');

    // The statement's own outcome stands; what it did is not kept either way (docs/decisions.md 10.21).
    expect(response.failure).toBeUndefined();
    expect(response.body).toMatchObject({ rolledBack: true });
    expect(fake.releases()[0]?.options).toEqual({ destroy: false, resetSession: true });
    await fake.settled();
    expect(fake.resets()).toEqual(['ROLLBACK']);
    // The cleaning failed too: the connection is destroyed, never lent again.
    expect(fake.connections[0]?.destroyed).toBe(true);
  });

  it('lends a cleaned connection again without the settings of the last request', async () => {
    const { fake, query } = harness();
    await query("SET search_path = 'elsewhere'");
    const response = await query('SHOW search_path');
    expect(fake.connections).toHaveLength(1);
    expect(response.body).toMatchObject({ rows: [{ search_path: '' }] });
  });
});
