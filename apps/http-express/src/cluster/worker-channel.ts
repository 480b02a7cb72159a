/**
 * The channel types of each end, and the time limits a worker gives the primary
 * (docs/decisions.md 10.28).
 */
import { TIMER_MAX_MS } from '../timer-limit';
import type { IpcChannel } from './ipc-channel';
import type { PrimaryNotices, PrimaryRequests, WorkerNotices, WorkerRequests } from './protocol';

/** A worker's end: it sends WorkerRequests and answers PrimaryRequests. */
export type ChannelToPrimary = IpcChannel<
  WorkerRequests,
  PrimaryRequests,
  WorkerNotices,
  PrimaryNotices
>;

/** The primary's end towards one worker. */
export type ChannelToWorker = IpcChannel<
  PrimaryRequests,
  WorkerRequests,
  PrimaryNotices,
  WorkerNotices
>;

/** What a worker's store and counters use of their channel. */
export type PrimaryLink = Pick<ChannelToPrimary, 'request' | 'notify'>;

/**
 * How long a worker waits for the primary to confirm an invalidation or a clear. The primary
 * answers within its own bounds (a worker's acknowledgement, then its exit once killed) unless it
 * is itself stopped; this is well past them.
 */
export const CONFIRMATION_TIMEOUT_MS = 5_000;

/** How long a worker waits for statistics gathered from every worker. */
export const STATISTICS_TIMEOUT_MS = 2_000;

/**
 * How long the primary waits for a session request it forwarded to the session's worker
 * (docs/decisions.md 10.35): the session's lifetime ends any request in it, and a minute covers
 * the cancel of what ran and the answer.
 */
export function sessionRequestTimeoutMs(sessionMaxLifetimeMs: number): number {
  return Math.min(sessionMaxLifetimeMs + 60_000, TIMER_MAX_MS);
}

/** How long a worker waits for the primary to run a cancel in every worker (10.34, 10.35). */
export const CANCEL_TIMEOUT_MS = 2_000;
