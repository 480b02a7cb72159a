import { FAILED_CANCELS_PER_REQUEST, RunningRequests } from '../../src/execution/running-requests';
import type { ConnectionTarget } from '../../src/ports/connections';
import { fakeTarget } from '../fakes/fake-connections';

describe('running requests by id', () => {
  it('cancels every request running with an id, and forgets each as it ends', () => {
    const running = new RunningRequests();
    const first = running.add('req-1');
    const second = running.add('req-1');
    const other = running.add('req-2');
    for (const { request } of [first, second, other]) request.target = fakeTarget;

    expect(running.cancel('req-1', fakeTarget)).toBe(true);
    expect([first, second, other].map(({ request }) => request.cancelled)).toEqual([
      true,
      true,
      false,
    ]);

    first.done();
    first.done(); // twice: harmless
    const third = running.add('req-1');
    third.request.target = fakeTarget;
    expect(running.cancel('req-1', fakeTarget)).toBe(true);
    expect(third.request.cancelled).toBe(true);

    second.done();
    third.done();
    expect(running.cancel('req-1', fakeTarget)).toBe(false);
    expect(running.cancel('req-2', { ...fakeTarget, password: 'wrong' })).toBe(false);
    other.done();
    expect(running.cancel('req-2', fakeTarget)).toBe(false);
  });

  it('a request that ended is not cancelled with a later one of the same id', () => {
    const running = new RunningRequests();
    const ended = running.add('same');
    ended.request.target = fakeTarget;
    ended.done();
    const later = running.add('same');
    later.request.target = fakeTarget;
    ended.done(); // an ended request's late done leaves the later one registered

    expect(running.cancel('same', fakeTarget)).toBe(true);
    expect(ended.request.cancelled).toBe(false);
    expect(later.request.cancelled).toBe(true);
  });

  it('a request no longer cancellable by id once enough cancels naming it cancelled nothing', () => {
    const running = new RunningRequests();
    const victim = running.add('victim');
    victim.request.target = fakeTarget;
    for (let guess = 0; guess < FAILED_CANCELS_PER_REQUEST; guess++) {
      expect(running.cancel('victim', { ...fakeTarget, password: `guess-${guess}` })).toBe(false);
    }
    // The right login now cancels nothing, and says so as a wrong one does.
    expect(running.cancel('victim', fakeTarget)).toBe(false);
    expect(victim.request.cancelled).toBe(false);
  });

  it('a login differs by any of host, port, user, database and password, absent or empty', () => {
    const runningFor = (target: ConnectionTarget): RunningRequests => {
      const running = new RunningRequests();
      running.add('r').request.target = target;
      return running;
    };
    const login = { ...fakeTarget, password: '' };
    for (const other of [
      { host: 'elsewhere' },
      { port: fakeTarget.port + 1 },
      { user: 'someone' },
      { database: 'other' },
      { password: undefined },
    ]) {
      expect(runningFor(login).cancel('r', { ...login, ...other })).toBe(false);
    }
    // sslMode says how to connect, not as whom.
    expect(runningFor(login).cancel('r', { ...login, sslMode: 'require' })).toBe(true);
  });
});
