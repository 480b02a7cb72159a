/**
 * The IPC channel between the primary and a worker (docs/decisions.md 10.28), with two ends wired
 * to each other in one process: correlation ids, time limits, and that nothing malformed throws.
 */
import { IpcChannel, IpcError } from '../../src/cluster/ipc-channel';
import {
  PRIMARY_NOTICES,
  PRIMARY_REQUESTS,
  WORKER_NOTICES,
  WORKER_REQUESTS,
} from '../../src/cluster/protocol';
import type { ChannelToPrimary, ChannelToWorker } from '../../src/cluster/worker-channel';

type Sent = { to: 'primary' | 'worker'; message: unknown };

/** A worker's end and the primary's end; messages are delivered on the next turn, as IPC does. */
function pair(
  options: {
    workerSide?: Partial<ConstructorParameters<typeof IpcChannel>[0]['handlers']>;
    deliver?: (sent: Sent) => boolean;
  } = {},
) {
  const malformed: string[] = [];
  const counted: number[] = [];
  const deliver = options.deliver ?? (() => true);
  // Each end's send reaches the other end, declared below: messages go on a later turn.
  const worker: ChannelToPrimary = new IpcChannel({
    send: (message, done) => {
      setImmediate(() => {
        if (deliver({ to: 'primary', message })) primary.receive(message);
        done(null);
      });
    },
    outgoing: WORKER_REQUESTS,
    incoming: PRIMARY_REQUESTS,
    incomingNotices: PRIMARY_NOTICES,
    handlers: {
      applyInvalidation: () => ({}),
      clearLocalCache: () => ({}),
      localCacheSize: () => ({ entries: 3 }),
      localRecentEntries: () => ({ entries: [] }),
      localPoolStats: () => ({ pools: [] }),
      localMetrics: () => ({ metrics: [] }),
      holdsSession: () => ({ holds: false }),
      runSessionRequest: () => ({
        status: 200,
        json: '{}',
        serverTiming: null,
        consistencyToken: null,
        retryAfterSeconds: null,
      }),
      cancelLocal: () => ({ cancelled: false }),
      ...(options.workerSide as object),
    },
    noticeHandlers: { callerGone: () => undefined },
    onMalformed: (reason) => malformed.push(`worker: ${reason}`),
  });
  const primary: ChannelToWorker = new IpcChannel({
    send: (message, done) => {
      setImmediate(() => {
        if (deliver({ to: 'worker', message })) worker.receive(message);
        done(null);
      });
    },
    outgoing: PRIMARY_REQUESTS,
    incoming: WORKER_REQUESTS,
    incomingNotices: WORKER_NOTICES,
    handlers: {
      join: () => ({}),
      invalidate: () => ({}),
      clearCaches: () => ({}),
      counterTotals: ({ pending }) => ({ ...pending, hits: pending.hits + 1 }),
      cacheSize: () => ({ entries: 7 }),
      recentEntries: () => ({ entries: [] }),
      poolStats: () => ({ pools: [] }),
      metrics: () => ({ exposition: '' }),
      sessionRequest: () => ({ answer: null }),
      cancelRequest: () => ({ cancelled: false }),
    },
    noticeHandlers: {
      counters: (delta) => counted.push(delta.hits),
      listening: () => undefined,
      callerGone: () => undefined,
    },
    onMalformed: (reason) => malformed.push(`primary: ${reason}`),
  });
  return { primary, worker, malformed, counted };
}

describe('IpcChannel', () => {
  it('answers each request with its own result, by correlation id', async () => {
    const { primary, worker } = pair();
    const [size, totals, local] = await Promise.all([
      worker.request('cacheSize', {}, 1000),
      worker.request(
        'counterTotals',
        { pending: { hits: 1, misses: 2, executed: 2, executionMs: 1.5 } },
        1000,
      ),
      primary.request('localCacheSize', {}, 1000),
    ]);
    expect(size).toEqual({ entries: 7 });
    expect(totals).toEqual({ hits: 2, misses: 2, executed: 2, executionMs: 1.5 });
    expect(local).toEqual({ entries: 3 });
  });

  it('rejects a request not answered in time, and drops its late answer', async () => {
    const { primary } = pair({
      workerSide: {
        localCacheSize: () =>
          new Promise((resolve) => setTimeout(() => resolve({ entries: 1 }), 100)),
      },
    });
    const error = await primary.request('localCacheSize', {}, 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IpcError);
    expect((error as IpcError).failure).toBe('timeout');
    // The late answer arrives and is ignored; later requests still work.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await expect(primary.request('localPoolStats', {}, 1000)).resolves.toEqual({ pools: [] });
  });

  it('answers a handler failure as a remote error', async () => {
    const { primary } = pair({
      workerSide: {
        applyInvalidation: () => {
          throw new Error('cannot apply');
        },
      },
    });
    const failed = primary.request(
      'applyInvalidation',
      { where: { scope: 's' }, relations: null },
      1000,
    );
    await expect(failed).rejects.toMatchObject({ failure: 'remote' });
    await expect(failed).rejects.toThrow('applyInvalidation: cannot apply');
  });

  it('drops malformed messages without throwing, and refuses malformed payloads and answers', async () => {
    const { primary, worker, malformed, counted } = pair({
      workerSide: { localCacheSize: () => ({ entries: -1 }) as never },
    });
    for (const garbage of [
      null,
      42,
      'text',
      [],
      { tag: 'someone-else', kind: 'request' },
      { tag: 'sqlgate/cluster' },
      { tag: 'sqlgate/cluster', kind: 'request', id: 'x', type: 'join' },
      { tag: 'sqlgate/cluster', kind: 'response', id: 999, ok: true, result: {} },
      { tag: 'sqlgate/cluster', kind: 'notice', type: 'counters', payload: { hits: 'many' } },
      { tag: 'sqlgate/cluster', kind: 'notice', type: 'toString', payload: {} },
      { tag: 'sqlgate/cluster', kind: 'request', id: 99_999, type: '__proto__', payload: {} },
    ]) {
      expect(() => primary.receive(garbage)).not.toThrow();
      expect(() => worker.receive(garbage)).not.toThrow();
    }
    await new Promise((resolve) => setImmediate(resolve));
    // The malformed counters notice counted nothing; each sqlgate message that was wrong was noted.
    expect(counted).toEqual([]);
    const noted = malformed.length;
    expect(noted).toBeGreaterThanOrEqual(5);
    const refused = worker.request(
      'invalidate',
      { where: { nowhere: true }, relations: null } as never,
      1000,
    );
    await expect(refused).rejects.toMatchObject({ failure: 'remote' });
    await expect(refused).rejects.toThrow('invalidate: malformed request invalidate');
    await expect(primary.request('localCacheSize', {}, 1000)).rejects.toMatchObject({
      failure: 'malformed',
    });
    expect(malformed.length).toBeGreaterThan(noted);
  });

  it('delivers notices, and resolves once they are written', async () => {
    const { worker, counted } = pair();
    await worker.notify('counters', { hits: 4, misses: 0, executed: 0, executionMs: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted).toEqual([4]);
  });

  it('fails pending requests when closed, and refuses new ones', async () => {
    const { worker } = pair({ deliver: () => false });
    const pending = worker.request('cacheSize', {}, 10_000);
    worker.close('the primary is gone');
    await expect(pending).rejects.toMatchObject({ failure: 'closed' });
    await expect(worker.request('cacheSize', {}, 10_000)).rejects.toMatchObject({
      failure: 'closed',
    });
    expect(worker.closed).toBe(true);
  });

  it('fails a request whose message could not be sent', async () => {
    const channel: ChannelToPrimary = new IpcChannel({
      send: (_message, done) => done(new Error('channel closed')),
      outgoing: WORKER_REQUESTS,
      incoming: PRIMARY_REQUESTS,
      incomingNotices: PRIMARY_NOTICES,
      handlers: {} as never,
      noticeHandlers: { callerGone: () => undefined },
      onMalformed: () => undefined,
    });
    await expect(channel.request('cacheSize', {}, 10_000)).rejects.toMatchObject({
      failure: 'send',
    });
    await expect(
      channel.notify('listening', { url: 'http://127.0.0.1:1' }),
    ).resolves.toBeUndefined();
  });
});
