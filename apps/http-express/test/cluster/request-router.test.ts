/**
 * The primary's routing of session requests and cancels (docs/decisions.md 10.35) over fake
 * workers: a request goes to the worker that holds its session, a worker that does not answer is
 * left out, and a caller's going away follows its request to the worker running it.
 */
import { IpcError } from '../../src/cluster/ipc-channel';
import type { SessionRequest } from '../../src/cluster/protocol';
import { RequestRouter } from '../../src/cluster/request-router';
import type { WorkerLink } from '../../src/cluster/cluster-hub';
import type { ChannelToWorker } from '../../src/cluster/worker-channel';

type Asked = { type: string; payload: Record<string, unknown> };

function fakeWorker(
  pid: number,
  answer: (type: string, payload: Record<string, unknown>) => Promise<unknown>,
): WorkerLink & { asked: Asked[]; notices: Asked[] } {
  const asked: Asked[] = [];
  const notices: Asked[] = [];
  const channel = {
    closed: false,
    request: (type: string, payload: Record<string, unknown>) => {
      asked.push({ type, payload });
      return answer(type, payload);
    },
    notify: async (type: string, payload: Record<string, unknown>) => {
      notices.push({ type, payload });
    },
  } as unknown as ChannelToWorker;
  return { pid, channel, asked, notices };
}

const request = (sessionId: string, forwardId = 1): SessionRequest => ({
  sessionId,
  operation: 'query',
  body: { sql: 'SELECT 1' },
  requestId: 'r-1',
  requestIdKnown: 'from-start',
  forwardId,
});

const answered = { status: 200, json: '{"rows":[]}', serverTiming: null };

describe('RequestRouter', () => {
  it('runs a session request in the worker holding the session, and only there', async () => {
    const origin = fakeWorker(1, async () => ({ holds: false }));
    const other = fakeWorker(2, async () => ({ holds: false }));
    const holder = fakeWorker(3, async (type) =>
      type === 'holdsSession' ? { holds: true } : answered,
    );
    const router = new RequestRouter(() => [origin, other, holder], 10_000);
    expect(await router.sessionRequest(origin, request('s-1'))).toEqual({ answer: answered });
    expect(origin.asked).toEqual([]);
    expect(other.asked.map((each) => each.type)).toEqual(['holdsSession']);
    expect(holder.asked.map((each) => each.type)).toEqual(['holdsSession', 'runSessionRequest']);
  });

  it('answers null when no other worker holds the session, leaving out one that does not answer', async () => {
    const origin = fakeWorker(1, async () => ({ holds: false }));
    const silent = fakeWorker(2, async () => {
      throw new IpcError('timeout', 'holdsSession: no answer');
    });
    const router = new RequestRouter(() => [origin, silent], 10_000);
    expect(await router.sessionRequest(origin, request('s-2'))).toEqual({ answer: null });
  });

  it("tells the worker running a request when its caller went away, or its receiver's worker died", async () => {
    let finish!: (value: unknown) => void;
    const origin = fakeWorker(1, async () => ({ holds: false }));
    const holder = fakeWorker(2, (type) =>
      type === 'holdsSession'
        ? Promise.resolve({ holds: true })
        : new Promise((resolve) => (finish = resolve)),
    );
    const router = new RequestRouter(() => [origin, holder], 10_000);
    const forwarded = router.sessionRequest(origin, request('s-3', 41));
    await new Promise((resolve) => setImmediate(resolve));
    router.callerGone(origin, 40); // another of its requests
    router.callerGone(holder, 41); // another worker's request of the same number
    expect(holder.notices).toEqual([]);
    router.callerGone(origin, 41);
    router.workerGone(origin);
    const primaryId = holder.asked[1]?.payload.forwardId;
    expect(holder.notices).toEqual([
      { type: 'callerGone', payload: { forwardId: primaryId } },
      { type: 'callerGone', payload: { forwardId: primaryId } },
    ]);
    finish(answered);
    expect(await forwarded).toEqual({ answer: answered });
    // Answered: nothing more to tell.
    router.workerGone(origin);
    expect(holder.notices).toHaveLength(2);
  });

  it('runs nothing for a caller that went away while the worker holding its session was looked for', async () => {
    let holds!: (value: unknown) => void;
    const origin = fakeWorker(1, async () => ({ holds: false }));
    const holder = fakeWorker(2, (type) =>
      type === 'holdsSession'
        ? new Promise((resolve) => (holds = resolve))
        : Promise.resolve(answered),
    );
    const router = new RequestRouter(() => [origin, holder], 10_000);
    const forwarded = router.sessionRequest(origin, request('s-4', 7));
    await new Promise((resolve) => setImmediate(resolve));
    router.callerGone(origin, 7);
    holds({ holds: true });
    expect(await forwarded).toEqual({ answer: null });
    expect(holder.asked.map((each) => each.type)).toEqual(['holdsSession']);
  });

  it('tries a cancel in every worker, and counts a failure for its client when none cancelled', async () => {
    const cancelling = fakeWorker(1, async () => ({ cancelled: true }));
    const idle = fakeWorker(2, async () => ({ cancelled: false }));
    const router = new RequestRouter(() => [cancelling, idle], 10_000);
    expect(await router.cancelRequest('r', {}, 'client')).toEqual({ cancelled: true });
    expect(cancelling.asked.map((each) => each.type)).toEqual(['cancelLocal']);
    expect(idle.asked.map((each) => each.type)).toEqual(['cancelLocal']);

    const nobody = new RequestRouter(() => [idle], 10_000);
    for (let failure = 0; failure < 10; failure++) {
      expect(await nobody.cancelRequest('r', {}, 'guesser')).toEqual({ cancelled: false });
    }
    expect(await nobody.cancelRequest('r', {}, 'guesser')).toEqual({
      retryAfterMs: expect.any(Number),
    });
    expect(await nobody.cancelRequest('r', {}, 'someone else')).toEqual({ cancelled: false });
  });
});
