/**
 * The signal of a request whose caller may go away: aborted when the response closes before it was
 * sent (docs/decisions.md 10.7). Core reads only `aborted` and the abort listeners
 * (AbortSignalLike); a Node AbortController per request cost more CPU than the planning of the
 * request it watched (docs/benchmarks.md), so this one is a flag and a list.
 */
import type { ServerResponse } from 'node:http';
import type { AbortSignalLike } from '@sqlgate/core';

export class DisconnectSignal implements AbortSignalLike {
  aborted = false;
  private listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at !== -1) this.listeners.splice(at, 1);
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

/** Aborts when the client goes away before the response was sent: the statement is cancelled. */
export function abortOnDisconnect(res: ServerResponse): DisconnectSignal {
  const signal = new DisconnectSignal();
  // `on`, not `once`: a response closes once, and abort() is idempotent anyway; `once` would wrap
  // the listener and remove it again on every request.
  res.on('close', () => {
    if (!res.writableFinished) signal.abort();
  });
  return signal;
}
