/**
 * Sessions and cancel by request id in core (docs/decisions.md 10.26), over the fake provider:
 * what runs where, what is never wrapped or rolled back, the limits, the clocks, and how a
 * session ends. The same behaviours against real PostgreSQL are in the HTTP tests (sessions.test.ts).
 */
import { ErrorCodes, RequestError } from '../../src/errors';
import { createQueryService, type QueryServiceOptions } from '../../src/service';
import { connectionLost, FakeConnectionProvider, fakeTarget } from '../fakes/fake-connections';
import { sleep } from '../execution/service-harness';
import { queryRequest, sessionOpenRequest, sessionQuery, targetOf } from '../requests';

const { host, port, user, password, database } = fakeTarget;
const connectionFields = { host, port, user, password, database };

/** Makes every CancelRequest of `fake`'s connections take `ms` to reach the server. */
function slowCancels(fake: FakeConnectionProvider, ms: number): void {
  const acquire = fake.acquire.bind(fake);
  fake.acquire = async (...args) => {
    const acquired = await acquire(...args);
    if (acquired.ok) {
      const connection = acquired.value;
      const cancel = connection.cancel.bind(connection);
      connection.cancel = async () => {
        await sleep(ms);
        await cancel();
      };
    }
    return acquired;
  };
}

/** Resolves once `sql` was sent (the fake then runs it for its delay). */
async function statementRunning(fake: FakeConnectionProvider, sql: string): Promise<void> {
  while (!fake.callsOf('run').some((call) => call.sql === sql)) await sleep(5);
}

function setUp(options: Partial<QueryServiceOptions> = {}) {
  const fake = new FakeConnectionProvider();
  const service = createQueryService({ connections: fake, ...options });
  const open = async (fields: Record<string, unknown> = {}) => {
    const answer = await service.openSession(
      sessionOpenRequest({ ...connectionFields, ...fields }),
    );
    if (answer.failure) throw new Error(`not opened: ${JSON.stringify(answer.body)}`);
    return (answer.body as { sessionId: string }).sessionId;
  };
  return { fake, service, open };
}

describe('sessions', () => {
  it('runs each request as written on one connection, and keeps it between requests', async () => {
    const { fake, service, open } = setUp();
    fake.on('BEGIN', { status: 'in-transaction' }).on('COMMIT', { status: 'idle' });
    const id = await open();
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);

    const first = await service.executeInSession(
      id,
      sessionQuery({ sql: 'BEGIN; INSERT INTO t VALUES (1)' }),
    );
    expect(first.failure).toBeUndefined();
    expect(first.body).toMatchObject({
      transactionUsed: false,
      session: { status: 'open', transactionStatus: 'in-transaction' },
    });
    const second = await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1 AS one' }));
    expect(second.body).toMatchObject({ session: { transactionStatus: 'in-transaction' } });
    const third = await service.executeInSession(id, sessionQuery({ sql: 'COMMIT' }));
    expect(third.body).toMatchObject({ session: { status: 'open', transactionStatus: 'idle' } });

    // Exactly the caller's statements, in order, on connection 1; nothing wrapped, no ROLLBACK,
    // no SET statement_timeout, and the connection was not given back between requests.
    expect(fake.sent(1)).toEqual([
      'BEGIN',
      'INSERT INTO t VALUES (1)',
      'SELECT 1 AS one',
      'COMMIT',
    ]);
    expect(fake.releases()).toEqual([]);
    expect(fake.calls.filter((call) => call.kind === 'acquire')).toHaveLength(1);

    const closed = await service.closeSession(id);
    expect(closed).toEqual({ body: { closed: true, rolledBack: false } });
    expect(fake.releases()).toEqual([
      expect.objectContaining({ connection: 1, options: { resetSession: true } }),
    ]);
    await fake.settled();
    expect(fake.resets()).toEqual(['DISCARD ALL']);
    expect((await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }))).failure).toEqual(
      {
        code: ErrorCodes.SESSION_NOT_FOUND,
      },
    );
  });

  it('closing a session with a transaction open rolls it back and cleans the connection', async () => {
    const { fake, service, open } = setUp();
    fake.on('BEGIN', { status: 'in-transaction' });
    const id = await open();
    await service.executeInSession(id, sessionQuery({ sql: 'BEGIN' }));
    expect(await service.closeSession(id)).toEqual({ body: { closed: true, rolledBack: true } });
    await fake.settled();
    expect(fake.resets()).toEqual(['ROLLBACK', 'DISCARD ALL']);
    expect(service.sessionStatistics()).toMatchObject({ open: 0, opened: 1 });
    expect(service.sessionStatistics().ended.closed).toBe(1);
  });

  it('answers a refused query once the session is found, with its state; carries warnings', async () => {
    const { service, open } = setUp();
    const id = await open();
    // How the HTTP app refuses a body naming an option a session cannot have (its contract
    // tests read the bodies).
    const refusal = new RequestError(
      ErrorCodes.INVALID_REQUEST,
      "This field cannot be used in a session: 'readOnly' (write BEGIN READ ONLY in the session instead)",
    );
    const answer = await service.executeInSession(id, refusal);
    expect(answer.failure).toEqual({ code: ErrorCodes.INVALID_REQUEST });
    expect(answer.body).toEqual({
      error: refusal.message,
      session: { status: 'open', transactionStatus: 'idle', expiresAt: expect.any(String) },
    });
    // A session that is not there is what the answer says, refused body or not.
    const elsewhere = await service.executeInSession('no-such-session', refusal);
    expect(elsewhere.failure).toEqual({ code: ErrorCodes.SESSION_NOT_FOUND });
    const opening = await service.openSession(refusal);
    expect(opening).toEqual({
      body: { error: refusal.message },
      failure: { code: ErrorCodes.INVALID_REQUEST },
    });
    const copy = await service.executeInSession(id, sessionQuery({ sql: 'COPY t TO STDOUT' }));
    expect(copy.body).toMatchObject({ error: expect.stringContaining('cannot run in a session') });
    const warning = "unknown field 'maxrows' (did you mean 'maxRows'?)";
    const warned = await service.executeInSession(id, {
      ...sessionQuery({ sql: 'SELECT 1' }),
      warnings: [warning],
    });
    expect(warned.body).toMatchObject({ warnings: [warning] });
  });

  it('runs one request at a time: a second one meanwhile is SESSION_BUSY', async () => {
    const { fake, service, open } = setUp();
    fake.on('SELECT slow', { delayMs: 200, rows: [{ a: 1 }] });
    const id = await open();
    const slow = service.executeInSession(id, sessionQuery({ sql: 'SELECT slow' }));
    await sleep(20);
    const other = await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }));
    expect(other.failure).toEqual({ code: ErrorCodes.SESSION_BUSY });
    expect(other.body).toMatchObject({ code: 'SESSION_BUSY', session: { status: 'open' } });
    expect((await slow).failure).toBeUndefined();
    expect(
      (await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }))).failure,
    ).toBeUndefined();
  });

  it('holds MAX_SESSIONS and the per-pool limit, counting sessions still connecting', async () => {
    const { fake, service } = setUp({ sessions: { maxSessions: 3, maxPerPool: 2 } });
    fake.onAcquire({ delayMs: 50 });
    // Three at once on one pool: two connect, the third is refused at once.
    const answers = await Promise.all(
      [1, 2, 3].map(() => service.openSession(sessionOpenRequest(connectionFields))),
    );
    expect(answers.map((answer) => answer.failure?.code)).toEqual([
      undefined,
      undefined,
      ErrorCodes.SESSION_LIMIT,
    ]);
    const otherPool = await service.openSession(
      sessionOpenRequest({ ...connectionFields, database: 'other' }),
    );
    expect(otherPool.failure).toBeUndefined();
    const fourth = await service.openSession(
      sessionOpenRequest({ ...connectionFields, database: 'third' }),
    );
    expect(fourth.failure).toEqual({ code: ErrorCodes.SESSION_LIMIT });
    expect(fourth.body).toEqual({
      error: expect.stringContaining('MAX_SESSIONS'),
      code: 'SESSION_LIMIT',
    });
    for (const limits of [{ maxSessions: 0 }, { maxPerPool: 0 }]) {
      const off = setUp({ sessions: limits });
      expect(await off.service.openSession(sessionOpenRequest(connectionFields))).toEqual({
        body: {
          error: expect.stringContaining('Sessions are off on this instance'),
          code: 'SESSIONS_OFF',
        },
        failure: { code: ErrorCodes.SESSIONS_OFF },
      });
    }
  });

  it('a failed connect takes no place of the limits', async () => {
    const { fake, service, open } = setUp({ sessions: { maxSessions: 1, maxPerPool: 1 } });
    fake.onAcquire({ error: connectionLost() });
    const refused = await service.openSession(sessionOpenRequest(connectionFields));
    expect(refused.failure?.code).toBe(ErrorCodes.CONNECTION_FAILED);
    await expect(open()).resolves.toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('ends a session idle for idleTimeoutMs; a request in time starts the clock again', async () => {
    const { fake, service, open } = setUp();
    fake.on('BEGIN', { status: 'in-transaction' });
    const id = await open({ idleTimeoutMs: 500 });
    await service.executeInSession(id, sessionQuery({ sql: 'BEGIN' }));
    await sleep(300);
    expect(
      (await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }))).failure,
    ).toBeUndefined();
    await sleep(300);
    expect(
      (await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }))).failure,
    ).toBeUndefined();
    await sleep(800);
    expect((await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }))).failure).toEqual(
      {
        code: ErrorCodes.SESSION_NOT_FOUND,
      },
    );
    await fake.settled();
    expect(fake.resets()).toEqual(['ROLLBACK', 'DISCARD ALL']);
    expect(service.sessionStatistics().ended.idle).toBe(1);
  });

  it('refuses an idleTimeoutMs above the server limit instead of shortening it', async () => {
    const { service } = setUp({ sessions: { idleTimeoutMs: 1000 } });
    const answer = await service.openSession(
      sessionOpenRequest({ ...connectionFields, idleTimeoutMs: 1001 }),
    );
    expect(answer.failure).toEqual({ code: ErrorCodes.INVALID_REQUEST });
    expect(answer.body).toMatchObject({
      error:
        "'idleTimeoutMs' must be an integer from 1 to 1000 (SESSION_IDLE_TIMEOUT_MS), not 1001",
    });
  });

  it('ends a session at its lifetime even while requests keep it busy, cancelling the one running', async () => {
    const { fake, service, open } = setUp({ sessions: { maxLifetimeMs: 250 } });
    // Longer than the test may take: only the lifetime's cancel can end it.
    fake.on('SELECT slow', { delayMs: 600_000 });
    const id = await open();
    const slow = await service.executeInSession(id, sessionQuery({ sql: 'SELECT slow' }));
    expect(slow.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
    expect(slow.body).toMatchObject({
      cancelled: true,
      session: { status: 'closed', reason: 'lifetime' },
    });
    // The end completes once the cancel has reached the server and the connection is given back.
    await sleep(20);
    expect(service.sessionStatistics().ended.lifetime).toBe(1);
  });

  it('a connection lost mid-session answers the loss and frees the session', async () => {
    const { fake, service, open } = setUp();
    fake.on('SELECT lost', { error: connectionLost() });
    const id = await open();
    const lost = await service.executeInSession(id, sessionQuery({ sql: 'SELECT lost' }));
    expect(lost.failure?.code).toBe(ErrorCodes.CONNECTION_FAILED);
    expect(lost.body).toMatchObject({ session: { status: 'closed', reason: 'broken' } });
    await sleep(0);
    expect(service.sessionStatistics()).toMatchObject({ open: 0 });
    expect(service.sessionStatistics().ended.broken).toBe(1);
    expect(fake.releases()).toEqual([expect.objectContaining({ options: { destroy: true } })]);
    expect(
      (await service.executeInSession(id, sessionQuery({ sql: 'SELECT 1' }))).failure?.code,
    ).toBe(ErrorCodes.SESSION_NOT_FOUND);
  });

  it('timeoutMs cancels a statement without touching the session settings', async () => {
    const { fake, service, open } = setUp();
    fake.on('SELECT slow', { delayMs: 5000 });
    const id = await open();
    const answer = await service.executeInSession(
      id,
      sessionQuery({ sql: 'SELECT slow', timeoutMs: 50 }),
    );
    expect(answer.body).toMatchObject({ error: { code: '57014' }, session: { status: 'open' } });
    // A timeout, not a cancel by a caller: answered as every 57014 is.
    expect(answer.failure).toEqual({ code: ErrorCodes.DATABASE_ERROR, sqlState: '57014' });
    expect(fake.sent(1).some((sql) => /statement_timeout/i.test(sql))).toBe(false);
  });

  it('DELETE .../query cancels what runs; the session stays open', async () => {
    const { fake, service, open } = setUp();
    fake.on('SELECT slow', { delayMs: 5000 });
    const id = await open();
    expect(service.cancelSessionQuery(id).failure).toEqual({
      code: ErrorCodes.REQUEST_NOT_FOUND,
    });
    const slow = service.executeInSession(id, sessionQuery({ sql: 'SELECT slow' }));
    await sleep(20);
    expect(service.cancelSessionQuery(id)).toEqual({ body: { cancelled: true } });
    const answer = await slow;
    expect(answer.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
    expect(answer.body).toMatchObject({ session: { status: 'open' } });
  });

  it('a cancel still on its way when a statement ends holds the next statement back, so it stops nothing', async () => {
    const { fake, service, open } = setUp();
    slowCancels(fake, 150);
    // The timeout fires at 50 ms, just before the statement ends by itself at 60 ms.
    fake.on('SELECT edge', { delayMs: 60, rows: [{ a: 1 }] }).on('SELECT next', { delayMs: 400 });
    const id = await open();
    const answer = await service.executeInSession(
      id,
      sessionQuery({
        sql: 'SELECT edge; SELECT next',
        timeoutMs: 50,
      }),
    );
    expect(answer.failure).toBeUndefined();
    expect(answer.body).toMatchObject({ results: [{ command: 'SELECT' }, { command: 'SELECT' }] });
  });

  it('a session closed while its CancelRequest travels goes back to the pool only after it arrived', async () => {
    const { fake, service, open } = setUp();
    slowCancels(fake, 150);
    // The statement ends by itself at 60 ms, while the cancel sent at 30 ms is still on its way.
    fake.on('SELECT edge', { delayMs: 60 });
    const id = await open();
    const running = service.executeInSession(id, sessionQuery({ sql: 'SELECT edge' }));
    await sleep(30);
    const closing = service.closeSession(id);
    // Shutdown meanwhile waits for the session already ending.
    await service.close();
    expect(fake.releases()).toEqual([expect.objectContaining({ connection: 1 })]);
    // The cancel reached the server (the fake) before the connection went back.
    const kinds = fake.calls.map((call) => call.kind);
    expect(kinds.indexOf('cancel')).toBeGreaterThan(-1);
    expect(kinds.indexOf('cancel')).toBeLessThan(kinds.indexOf('release'));
    expect((await closing).body).toEqual({ closed: true, rolledBack: false });
    expect((await running).body).toMatchObject({ session: { status: 'closed', reason: 'closed' } });
  });

  it('a caller who goes away while the session connects gets no session', async () => {
    const { fake, service, open } = setUp({ sessions: { maxSessions: 1, maxPerPool: 1 } });
    fake.onAcquire({ delayMs: 200 });
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 20);
    const answer = await service.openSession(sessionOpenRequest(connectionFields), {
      signal: gone.signal,
    });
    expect(answer.failure?.code).toBe(ErrorCodes.REQUEST_ABORTED);
    expect(service.sessionStatistics()).toMatchObject({ open: 0, opened: 0 });
    // Its place is free again.
    await expect(open()).resolves.toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('opening a session is cancellable by its request id while it waits for a connection', async () => {
    const { fake, service } = setUp();
    fake.onAcquire({ waitForAbort: true });
    const opening = service.openSession(sessionOpenRequest(connectionFields), {
      requestId: 'open-1',
    });
    await sleep(20);
    expect(
      service.cancelRequest('open-1', targetOf({ ...connectionFields, password: 'other' })).failure,
    ).toEqual({
      code: ErrorCodes.REQUEST_NOT_FOUND,
    });
    expect(service.cancelRequest('open-1', targetOf(connectionFields))).toEqual({
      body: { cancelled: true },
    });
    const answer = await opening;
    expect(answer.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
    expect(answer.body).toMatchObject({ code: 'REQUEST_CANCELLED' });
    expect(service.sessionStatistics()).toMatchObject({ open: 0, opened: 0 });
  });

  it('shutdown ends every session, rolling back what is open', async () => {
    const { fake, service, open } = setUp();
    fake.on('BEGIN', { status: 'in-transaction' });
    const ids = [await open(), await open()];
    for (const id of ids) await service.executeInSession(id, sessionQuery({ sql: 'BEGIN' }));
    await service.close();
    // Both connections cleaned (their steps may interleave).
    expect([...fake.resets()].sort()).toEqual([
      'DISCARD ALL',
      'DISCARD ALL',
      'ROLLBACK',
      'ROLLBACK',
    ]);
    expect(service.sessionStatistics().ended.shutdown).toBe(2);
    expect((await service.openSession(sessionOpenRequest(connectionFields))).failure?.code).toBe(
      ErrorCodes.SHUTTING_DOWN,
    );
  });

  it('shutdown gives up the opening of a session still waiting for its connection', async () => {
    const { fake, service } = setUp();
    fake.onAcquire({ waitForAbort: true });
    const opening = service.openSession(sessionOpenRequest(connectionFields));
    await sleep(20);
    await service.closeSessions();
    expect((await opening).failure).toEqual({ code: ErrorCodes.SHUTTING_DOWN });
    expect(service.sessionStatistics()).toMatchObject({ open: 0, opened: 0 });
  });
});

describe('cancel by request id', () => {
  it('cancels for the same login only; another login is answered as an id that runs nothing', async () => {
    const { fake, service } = setUp();
    fake.on('SELECT slow', { delayMs: 5000 });
    const running = service.execute(queryRequest({ ...connectionFields, sql: 'SELECT slow' }), {
      requestId: 'req-1',
    });
    await sleep(20);
    const unknown = service.cancelRequest('req-2', targetOf(connectionFields));
    expect(unknown.failure).toEqual({ code: ErrorCodes.REQUEST_NOT_FOUND });
    for (const other of [{ password: 'wrong' }, { password: undefined }, { user: 'someone' }]) {
      expect(service.cancelRequest('req-1', targetOf({ ...connectionFields, ...other }))).toEqual(
        unknown,
      );
    }
    expect(service.cancelRequest('req-1', targetOf(connectionFields))).toEqual({
      body: { cancelled: true },
    });
    const answer = await running;
    expect(answer.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
    expect(answer.body).toMatchObject({ error: { code: '57014' } });
    expect(service.cancelRequest('req-1', targetOf(connectionFields)).failure).toEqual({
      code: ErrorCodes.REQUEST_NOT_FOUND,
    });
  });

  it('an id sqlgate made up does not cancel a request whose answer is not streamed (10.26)', async () => {
    const { fake, service } = setUp();
    fake.on('SELECT slow', { delayMs: 100 });
    const running = service.execute(queryRequest({ ...connectionFields, sql: 'SELECT slow' }), {
      requestId: 'made-up',
      requestIdKnown: 'when-streaming',
    });
    await sleep(20);
    expect(service.cancelRequest('made-up', targetOf(connectionFields)).failure).toEqual({
      code: ErrorCodes.REQUEST_NOT_FOUND,
    });
    const answer = await running;
    expect(answer.failure).toBeUndefined();
    expect(fake.calls.filter((call) => call.kind === 'cancel')).toEqual([]);
  });

  it('a connection goes back to its pool only once the CancelRequest sent for it arrived', async () => {
    const { fake, service } = setUp();
    slowCancels(fake, 150);
    fake.on('SELECT edge', { delayMs: 60 });
    const running = service.execute(queryRequest({ ...connectionFields, sql: 'SELECT edge' }), {
      requestId: 'edge',
    });
    await sleep(30);
    expect(service.cancelRequest('edge', targetOf(connectionFields))).toEqual({
      body: { cancelled: true },
    });
    await running;
    await sleep(200);
    const kinds = fake.calls.map((call) => call.kind);
    expect(kinds.indexOf('cancel')).toBeGreaterThan(-1);
    expect(kinds.indexOf('cancel')).toBeLessThan(kinds.indexOf('release'));
  });

  it("in a session, a CancelRequest still on its way cannot stop the next request's statement", async () => {
    const { fake, service, open } = setUp();
    slowCancels(fake, 150);
    fake.on('SELECT edge', { delayMs: 60 }).on('SELECT next', { delayMs: 100 });
    const id = await open();
    const first = service.executeInSession(id, sessionQuery({ sql: 'SELECT edge' }), {
      requestId: 'edge',
    });
    await sleep(30);
    expect(service.cancelRequest('edge', targetOf(connectionFields))).toEqual({
      body: { cancelled: true },
    });
    // The statement ends before the CancelRequest arrives; the next request comes at once.
    await first;
    const next = await service.executeInSession(id, sessionQuery({ sql: 'SELECT next' }));
    expect(next.failure).toBeUndefined();
    const kinds = fake.calls.map((call) => (call.kind === 'run' ? call.sql : call.kind));
    expect(kinds.indexOf('cancel')).toBeGreaterThan(-1);
    expect(kinds.indexOf('cancel')).toBeLessThan(kinds.indexOf('SELECT next'));
  });

  it('a CancelRequest the server ignored (it came as the statement was sent) is sent again', async () => {
    const { fake, service } = setUp();
    // Longer than the test may take: only a second CancelRequest can end it.
    fake.on('SELECT long', { delayMs: 600_000, ignoredCancels: 1 });
    const running = service.execute(queryRequest({ ...connectionFields, sql: 'SELECT long' }), {
      requestId: 'again',
    });
    await statementRunning(fake, 'SELECT long');
    expect(service.cancelRequest('again', targetOf(connectionFields))).toEqual({
      body: { cancelled: true },
    });
    const answer = await running;
    expect(answer.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
    expect(fake.callsOf('cancel')).toHaveLength(2);
  });

  it('a statement that ignores every CancelRequest gets a few, not one per interval', async () => {
    const { fake, service } = setUp();
    // CANCEL_ATTEMPTS go CANCEL_AGAIN_MS apart: all well before it ends, however late timers fire.
    fake.on('SELECT stubborn', { delayMs: 4000, ignoredCancels: 100 });
    const running = service.execute(queryRequest({ ...connectionFields, sql: 'SELECT stubborn' }), {
      requestId: 'stubborn',
    });
    await statementRunning(fake, 'SELECT stubborn');
    service.cancelRequest('stubborn', targetOf(connectionFields));
    await running;
    expect(fake.callsOf('cancel')).toHaveLength(3);
  }, 30_000);

  it('a cancel stops a script: the statement running fails, the rest is never sent', async () => {
    const { fake, service } = setUp();
    fake.on('SELECT pause', { delayMs: 100 });
    const running = service.execute(
      queryRequest({ ...connectionFields, sql: 'VACUUM; SELECT pause; SELECT after' }),
      { requestId: 'script' },
    );
    await sleep(20);
    // The fake's CancelRequest interrupts the running statement; the rest is never sent.
    expect(service.cancelRequest('script', targetOf(connectionFields))).toEqual({
      body: { cancelled: true },
    });
    const answer = await running;
    expect(answer.failure).toEqual({ code: ErrorCodes.REQUEST_CANCELLED });
    expect(fake.sent()).not.toContain('SELECT after');
  });
});
