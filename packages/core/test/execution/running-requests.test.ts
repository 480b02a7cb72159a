import { RunningRequests } from '../../src/execution/running-requests';
import { fakeTarget } from '../fakes/fake-connections';

describe('running requests by id', () => {
  it('cancels every request running with an id, and forgets each as it ends', () => {
    const running = new RunningRequests();
    const first = running.add('req-1');
    const second = running.add('req-1');
    const other = running.add('req-2');
    for (const { request } of [first, second, other]) request.target = fakeTarget;

    expect(running.cancel('req-1', fakeTarget)).toBe('cancelled');
    expect([first, second, other].map(({ request }) => request.cancelled)).toEqual([
      true,
      true,
      false,
    ]);

    first.done();
    first.done(); // twice: harmless
    const third = running.add('req-1');
    third.request.target = fakeTarget;
    expect(running.cancel('req-1', fakeTarget)).toBe('cancelled');
    expect(third.request.cancelled).toBe(true);

    second.done();
    third.done();
    expect(running.cancel('req-1', fakeTarget)).toBe('not-found');
    expect(running.cancel('req-2', { ...fakeTarget, password: 'wrong' })).toBe('refused');
    other.done();
    expect(running.cancel('req-2', fakeTarget)).toBe('not-found');
  });

  it('a request that ended is not cancelled with a later one of the same id', () => {
    const running = new RunningRequests();
    const ended = running.add('same');
    ended.request.target = fakeTarget;
    ended.done();
    const later = running.add('same');
    later.request.target = fakeTarget;
    ended.done(); // an ended request's late done leaves the later one registered

    expect(running.cancel('same', fakeTarget)).toBe('cancelled');
    expect(ended.request.cancelled).toBe(false);
    expect(later.request.cancelled).toBe(true);
  });
});
