/**
 * Shaping outcomes into response bodies (docs/decisions.md 5, 10.8), requests refused before they
 * run, a cache store that fails, and the strategies driven directly through executePlan.
 */
import { ResultCache } from '../../src/cache';
import { ConnectionError, ErrorCodes, RequestError, SqlgateError } from '../../src/errors';
import { lazyCacheScope } from '../../src/execution/cache-attempt';
import { ExecutionContext, type ExecutionSettings } from '../../src/execution/context';
import { executePlan } from '../../src/execution/execute';
import { planExecution } from '../../src/execution/plan';
import { errorResponse, shapeResponse } from '../../src/execution/response';
import { systemClock } from '../../src/ports/clock';
import type { CacheStore } from '../../src/ports/cache-store';
import { databaseError, FakeConnectionProvider, fakeTarget } from '../fakes/fake-connections';
import { defaults, script, statement } from './fixtures';
import { failingStore } from './cache-support';
import { harness } from './service-harness';

const settings: ExecutionSettings = {
  defaultMaxRows: 100,
  alwaysResetSession: false,
  maxParallelReads: 2,
  maxResultBytes: 1024 * 1024,
};

describe('requests refused before they run', () => {
  it('answers a request its transport refused with the refusal, touching no connection', async () => {
    const { fake, service } = harness();
    // What the HTTP app reads a body naming only a host and SQL as (its contract tests).
    const refusal = new RequestError(ErrorCodes.MISSING_FIELDS, 'Missing required fields', {
      missing: ['port', 'user', 'database'],
    });
    const response = await service.execute(refusal);
    expect(response.body).toEqual({
      error: 'Missing required fields',
      missing: ['port', 'user', 'database'],
    });
    expect(response.failure).toEqual({ code: ErrorCodes.MISSING_FIELDS });
    expect(fake.calls).toEqual([]);
  });

  it('refuses params with several statements, and COPY FROM STDIN with its index', async () => {
    const { fake, query } = harness();
    const params = await query('SELECT $1; SELECT 2', { params: [1] });
    expect(params.failure).toEqual({ code: ErrorCodes.INVALID_REQUEST });
    const copy = await query('SELECT 1; COPY t FROM STDIN');
    expect(copy.body).toMatchObject({ statementIndex: 1 });
    expect(copy.failure).toEqual({ code: ErrorCodes.UNSUPPORTED_STATEMENT });
    expect(fake.calls).toEqual([]);
  });

  it('refuses SQL without statements and more statements than allowed', async () => {
    const { query } = harness({ maxStatements: 2 });
    expect((await query('  ;  -- nothing')).failure).toEqual({ code: ErrorCodes.NO_STATEMENTS });
    expect((await query('SELECT 1; SELECT 2; SELECT 3')).body).toEqual({
      error: 'The SQL text holds 3 statements; at most 2 are allowed',
    });
  });
});

describe('a cache store that fails', () => {
  const failing = failingStore({ size: async () => 0, recent: async () => [] });

  it('never fails the query: every lookup is a miss, every write to it is dropped', async () => {
    const { fake, query } = harness({ cacheStore: failing });
    fake.on('SELECT * FROM t', { rows: [{ a: 1 }] });

    const first = await query('SELECT * FROM t', { cache: { ttlMs: 1000 } });
    const second = await query('SELECT * FROM t', { cache: true });
    const write = await query('UPDATE t SET a = 2');

    for (const response of [first, second, write]) expect(response.failure).toBeUndefined();
    expect(second.body).not.toHaveProperty('cached');
    expect(fake.sent()).toEqual(['SELECT * FROM t', 'SELECT * FROM t', 'UPDATE t SET a = 2']);
  });
});

describe('shaping responses', () => {
  const [only] = script(statement('write', { text: 'DELETE FROM t' }));

  it('answers a one-statement outcome without statements as aborted', () => {
    const plan = planExecution([only!], { ...defaults, dryRun: true });
    const response = shapeResponse(
      plan,
      { strategy: 'transaction', outcomes: [], transactionUsed: true, rolledBack: true },
      1,
    );
    expect(response).toEqual({
      body: { error: 'The request was aborted by the caller' },
      failure: { code: ErrorCodes.REQUEST_ABORTED },
    });
  });

  it('turns errors that are not defects into their own bodies, and hides defects', () => {
    expect(
      errorResponse(new SqlgateError(ErrorCodes.TARGET_NOT_ALLOWED, 'Target not allowed'), 1),
    ).toEqual({
      body: { error: 'Target not allowed' },
      failure: { code: ErrorCodes.TARGET_NOT_ALLOWED },
    });
    const internal = new SqlgateError(ErrorCodes.INTERNAL_ERROR, 'invariant broken: x < 0');
    expect(errorResponse(internal, 1)).toEqual({
      body: { error: 'Internal server error' },
      failure: { code: ErrorCodes.INTERNAL_ERROR, internal },
    });
    expect(errorResponse('thrown string', 1).body).toEqual({ error: 'Internal server error' });
  });

  it('answers a pool that stayed exhausted with its code', () => {
    const error = new ConnectionError(ErrorCodes.POOL_EXHAUSTED, 'No connection', 'EPOOLWAIT');
    expect(errorResponse(error, 1)).toEqual({
      body: { error: { message: 'No connection', code: 'EPOOLWAIT' } },
      failure: { code: ErrorCodes.POOL_EXHAUSTED },
    });
  });
});

describe('executePlan without the service', () => {
  const context = (fake: FakeConnectionProvider, signal?: AbortSignal): ExecutionContext =>
    new ExecutionContext({
      provider: fake,
      target: fakeTarget,
      options: defaults,
      settings,
      clock: systemClock,
      signal,
    });

  it('runs hand-made statements with the strategy the plan names', async () => {
    const fake = new FakeConnectionProvider();
    const statements = script(
      statement('write', { text: 'INSERT INTO t VALUES (1)' }),
      statement('no-transaction', { text: 'VACUUM t' }),
    );

    const outcome = await executePlan(
      context(fake),
      planExecution(statements, defaults),
      statements,
    );

    expect(outcome).toMatchObject({
      strategy: 'no-transaction',
      transactionUsed: false,
      rolledBack: false,
      outcomes: [{ ok: true }, { ok: true }],
    });
    expect(outcome.failure).toBeUndefined();
    expect(fake.sent()).toEqual(['INSERT INTO t VALUES (1)', 'VACUUM t']);
    // No session statement, no timeout: the connection goes back as it is.
    expect(fake.releases()[0]?.options).toEqual({ destroy: false, resetSession: false });
  });

  it('keeps a successful read in the cache and never a failed one', async () => {
    const fake = new FakeConnectionProvider();
    fake.on('SELECT * FROM t', { error: databaseError('42501', 'permission denied') });
    const store: CacheStore = {
      get: async () => undefined,
      mark: async () => '0',
      set: jest.fn(async () => true),
      invalidate: async () => 0,
      clear: async () => undefined,
      size: async () => 0,
      recent: async () => [],
    };
    const cache = new ResultCache({
      store,
      defaultTtlMs: 1000,
      maxEntryBytes: 1024,
      enabledByDefault: true,
    });
    const statements = script(
      statement('read', { text: 'SELECT * FROM t', relations: { reads: ['t'], writes: [] } }),
    );
    const cached = new ExecutionContext({
      provider: fake,
      target: fakeTarget,
      options: defaults,
      settings,
      clock: systemClock,
      cacheScope: { cache, scope: lazyCacheScope(() => fake.scopeOf(fakeTarget)) },
    });

    const outcome = await executePlan(cached, planExecution(statements, defaults), statements);

    expect(outcome.outcomes[0]).toMatchObject({ ok: false });
    expect(store.set).not.toHaveBeenCalled();
    // The same read, succeeding, is kept: the cache was in play.
    fake.on('SELECT * FROM t', { rows: [{ a: 1 }] });
    await executePlan(cached, planExecution(statements, defaults), statements);
    expect(store.set).toHaveBeenCalledTimes(1);
  });
});
