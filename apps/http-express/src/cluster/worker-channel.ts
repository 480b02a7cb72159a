/**
 * The channel types of each end, and the time limits a worker gives the primary
 * (docs/decisions.md 10.28).
 */
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
