import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { abortOnDisconnect, DisconnectSignal } from '../src/disconnect-signal';

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

describe('abortOnDisconnect', () => {
  it('aborts as soon as the client closes its side, before the response closes', async () => {
    const seen: { closedAtAbort?: boolean } = {};
    const aborted = new Promise<void>((resolve) => {
      const server = createServer((_req, res) => {
        abortOnDisconnect(res).addEventListener('abort', () => {
          seen.closedAtAbort = res.closed;
          resolve();
          server.close();
        });
        // The request is left running, as a statement would be.
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        const client = connect(port, '127.0.0.1', () =>
          client.end('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
        );
        client.on('data', () => undefined);
        client.on('close', () => client.destroy());
      });
    });
    await aborted;
    // Told at the end of its input: the response's own close comes turns of the event loop later.
    expect(seen.closedAtAbort).toBe(false);
  });
});
