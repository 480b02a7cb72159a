/**
 * The primary's hub (docs/decisions.md 10.28) over fake workers: a relay is answered once every
 * other worker acknowledged or was evicted, statistics are gathered and merged.
 */
import pino from 'pino';
import { ClusterHub, type WorkerLink } from '../../src/cluster/cluster-hub';
import { IpcError } from '../../src/cluster/ipc-channel';
import type { ChannelToWorker } from '../../src/cluster/worker-channel';

type Answer = (type: string, payload: unknown) => Promise<unknown>;

function fakeWorker(pid: number, answer: Answer): WorkerLink & { asked: string[] } {
  const asked: string[] = [];
  const channel = {
    closed: false,
    request: (type: string, payload: unknown) => {
      asked.push(type);
      return answer(type, payload);
    },
  } as unknown as ChannelToWorker;
  return { pid, channel, asked };
}

const acknowledging: Answer = async (type) => {
  if (type === 'localCacheSize') return { entries: 2 };
  if (type === 'localPoolStats') {
    return {
      pools: [
        {
          poolId: 'p',
          totalConnections: 2,
          idleConnections: 1,
          activeConnections: 1,
          waitingClients: 0,
        },
      ],
    };
  }
  return {};
};

function hubWith(evicted: number[], evictDelayMs = 0) {
  return new ClusterHub({
    logger: pino({ level: 'silent' }),
    sessionRequestTimeoutMs: 1_000,
    evict: async (link) => {
      await new Promise((resolve) => setTimeout(resolve, evictDelayMs));
      evicted.push(link.pid);
    },
    listening: () => undefined,
  });
}

async function join(hub: ClusterHub, ...links: WorkerLink[]) {
  for (const link of links) await hub.handlersFor(link).join({});
}

const invalidation = { where: { scope: 'db' }, relations: null };

describe('ClusterHub', () => {
  it('relays an invalidation to every other joined worker, and answers once all acknowledged', async () => {
    const evicted: number[] = [];
    const hub = hubWith(evicted);
    let acknowledge!: () => void;
    const writer = fakeWorker(1, acknowledging);
    const slow = fakeWorker(2, () => new Promise((resolve) => (acknowledge = () => resolve({}))));
    const other = fakeWorker(3, acknowledging);
    const notJoined = fakeWorker(4, acknowledging);
    await join(hub, writer, slow, other);
    let answered = false;
    const relay = hub
      .handlersFor(writer)
      .invalidate(invalidation)
      .then(() => (answered = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    acknowledge();
    await relay;
    expect(writer.asked).toEqual([]);
    expect(slow.asked).toEqual(['applyInvalidation']);
    expect(other.asked).toEqual(['applyInvalidation']);
    expect(notJoined.asked).toEqual([]);
    expect(evicted).toEqual([]);
  });

  it.each([
    ['does not acknowledge in time', new IpcError('timeout', 'no answer in 1000 ms')],
    ['dies during the relay', new IpcError('closed', 'worker 2 exited')],
    ['fails to apply it', new IpcError('remote', 'applyInvalidation: failed')],
  ])('evicts a worker that %s, and answers only once it is gone', async (_what, failure) => {
    const evicted: number[] = [];
    const hub = hubWith(evicted, 30);
    const writer = fakeWorker(1, acknowledging);
    const frozen = fakeWorker(2, async () => {
      throw failure;
    });
    await join(hub, writer, frozen);
    await hub.handlersFor(writer).invalidate(invalidation);
    expect(evicted).toEqual([2]);
    // It takes no more relays.
    frozen.asked.length = 0;
    await hub.handlersFor(writer).clearCaches({});
    expect(frozen.asked).toEqual([]);
  });

  it('does not wait for a worker that joins during a relay, nor for one that left', async () => {
    const evicted: number[] = [];
    const hub = hubWith(evicted);
    let acknowledge!: () => void;
    const writer = fakeWorker(1, acknowledging);
    const member = fakeWorker(2, () => new Promise((resolve) => (acknowledge = () => resolve({}))));
    const late = fakeWorker(3, () => new Promise(() => undefined));
    const gone = fakeWorker(4, acknowledging);
    await join(hub, writer, member, gone);
    hub.leave(gone);
    const relay = hub.handlersFor(writer).invalidate(invalidation);
    await join(hub, late);
    acknowledge();
    await relay;
    expect(late.asked).toEqual([]);
    expect(gone.asked).toEqual([]);
  });

  it('forgets everywhere after a death, including in no particular worker', async () => {
    const hub = hubWith([]);
    const a = fakeWorker(1, acknowledging);
    const b = fakeWorker(2, acknowledging);
    await join(hub, a, b);
    await hub.forgetEverywhere();
    expect([a.asked, b.asked]).toEqual([['clearLocalCache'], ['clearLocalCache']]);
  });

  it('sums the counters of every worker', async () => {
    const hub = hubWith([]);
    const a = fakeWorker(1, acknowledging);
    const b = fakeWorker(2, acknowledging);
    hub.noticeHandlersFor(a).counters({ hits: 1, misses: 2, executed: 2, executionMs: 3 });
    await expect(
      hub.handlersFor(b).counterTotals({
        pending: { hits: 1, misses: 0, executed: 0, executionMs: 0 },
      }),
    ).resolves.toEqual({ hits: 2, misses: 2, executed: 2, executionMs: 3 });
  });

  it('gathers statistics from every worker, leaving out one that fails', async () => {
    const hub = hubWith([]);
    const a = fakeWorker(1, acknowledging);
    const b = fakeWorker(2, acknowledging);
    const broken = fakeWorker(3, async () => {
      throw new IpcError('timeout', 'no answer');
    });
    await join(hub, a, b, broken);
    await expect(hub.handlersFor(a).cacheSize({})).resolves.toEqual({ entries: 4 });
    await expect(hub.handlersFor(a).poolStats({})).resolves.toEqual({
      pools: [
        {
          poolId: 'p',
          totalConnections: 4,
          idleConnections: 2,
          activeConnections: 2,
          waitingClients: 0,
        },
      ],
    });
  });
});
