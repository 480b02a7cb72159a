/**
 * The signal of a request whose caller may go away: aborted when the response closes before it was
 * sent (docs/decisions.md 10.7). Core reads only `aborted` and the abort listeners
 * (AbortSignalLike); a Node AbortController per request cost more CPU than the planning of the
 * request it watched (docs/benchmarks.md), so this one is a flag and a list.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AbortSignalLike } from '@sqlgate/core';
import { whenClosed } from './response-closed';

export class DisconnectSignal implements AbortSignalLike {
  aborted = false;
  /** Set by `cancel()`: sqlgate stopped the request, and its caller reads the answer. */
  cancelled = false;
  private listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at !== -1) this.listeners.splice(at, 1);
  }

  /**
   * Stops the request as a cancel does (the end of a shutdown's grace period): what runs gets a
   * CancelRequest, and the request answers that it was cancelled.
   */
  cancel(): void {
    if (this.aborted) return;
    this.cancelled = true;
    this.abort();
  }

  /** The request is answered: nothing will abort it, and its listeners need not be kept. */
  release(): void {
    this.listeners = [];
  }

  /** Marks the signal aborted and calls each listener once, in the order they were added. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

const SIGNAL = Symbol('sqlgate.disconnectSignal');
const RUNNING = Symbol('sqlgate.runningSignal');

type SignalledResponse = ServerResponse & { [SIGNAL]?: DisconnectSignal };
type WatchedSocket = Socket & { [RUNNING]?: DisconnectSignal | undefined };

/**
 * Aborts when the client goes away before the response was sent: the statement is cancelled, and
 * sqlgate's own transaction is not committed. Gone is the first of: the connection's end of input
 * (the client closed its side; Node's server answers nothing after it), or the response's close.
 * The end of input comes two turns of the event loop before the close, long enough for a short
 * transaction to reach its COMMIT.
 */
export function abortOnDisconnect(res: ServerResponse): DisconnectSignal {
  const signal = new DisconnectSignal();
  // On the response, which lives as long as the request: the end of a shutdown finds it there.
  (res as SignalledResponse)[SIGNAL] = signal;
  const socket = res.req.socket as WatchedSocket;
  // The standalone server runs a connection's requests one at a time (pipelined-requests.ts):
  // one listener per connection aborts whichever runs. In an app mounted in a host's server,
  // pipelined requests may overlap: the end of input aborts the latest, the others at their close.
  if (!(RUNNING in socket)) {
    socket.once('end', () => socket[RUNNING]?.abort());
  }
  socket[RUNNING] = signal;
  whenClosed(res, () => {
    if (socket[RUNNING] === signal) socket[RUNNING] = undefined;
    if (!res.writableFinished) signal.abort();
    // A connection keeps its last response until its next request: not what the request ran.
    else signal.release();
  });
  if (socket.readableEnded) signal.abort();
  return signal;
}

/** The signal `abortOnDisconnect` gave the request, if it runs anything. */
export function disconnectSignalOf(res: ServerResponse): DisconnectSignal | undefined {
  return (res as SignalledResponse)[SIGNAL];
}
