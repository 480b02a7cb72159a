import { DisconnectSignal } from '../src/disconnect-signal';

describe('DisconnectSignal', () => {
  it('calls each listener once, in order, when aborted, and reads as aborted from then on', () => {
    const signal = new DisconnectSignal();
    const calls: string[] = [];
    signal.addEventListener('abort', () => calls.push('first'));
    signal.addEventListener('abort', () => calls.push('second'));
    expect(signal.aborted).toBe(false);
    signal.abort();
    signal.abort();
    expect(signal.aborted).toBe(true);
    expect(calls).toEqual(['first', 'second']);
  });

  it('does not call a removed listener, and keeps the others', () => {
    const signal = new DisconnectSignal();
    const calls: string[] = [];
    const removed = (): number => calls.push('removed');
    signal.addEventListener('abort', removed);
    signal.addEventListener('abort', () => calls.push('kept'));
    signal.removeEventListener('abort', removed);
    signal.removeEventListener('abort', () => undefined);
    signal.abort();
    expect(calls).toEqual(['kept']);
  });

  it('a listener that removes another during the abort does not skip it', () => {
    const signal = new DisconnectSignal();
    const calls: string[] = [];
    const second = (): number => calls.push('second');
    signal.addEventListener('abort', () => {
      calls.push('first');
      signal.removeEventListener('abort', second);
    });
    signal.addEventListener('abort', second);
    signal.abort();
    // Every listener registered when the caller went away is told: none can silence another.
    expect(calls).toEqual(['first', 'second']);
  });

  it('fits where core takes a signal, and a real AbortSignal still does', () => {
    const takes = (signal: import('@sqlgate/core').AbortSignalLike): boolean => signal.aborted;
    expect(takes(new DisconnectSignal())).toBe(false);
    expect(takes(AbortSignal.abort())).toBe(true);
  });
});
