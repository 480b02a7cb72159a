/**
 * Whether a target keeps one backend per client connection between transactions, or hands each
 * transaction to whichever backend is free, as a transaction pooler does (docs/decisions.md 10.32).
 * A pooler makes up its BackendKeyData, so a pid equal to `pg_backend_pid()` means a direct server;
 * behind a pooler, only a NOTIFY that reaches a silent LISTENing connection proves state is kept.
 */
import { randomBytes } from 'node:crypto';
import { ConnectionError, ErrorCodes, type SessionStateVerdict } from '@sqlgate/core';
import type { Notification } from './backend-messages';
import { askServer } from './bounded-query';
import type { SqlgateClient } from './client';
import { toDomainError } from './pg-errors';
import { SilenceWatchdog } from './silence-watchdog';
import { TypeRegistry } from './types/type-registry';

const KEPT: SessionStateVerdict = { kind: 'kept' };
const TRANSACTION_POOLER: SessionStateVerdict = { kind: 'transaction-pooler' };
const POOLER_UNPROVEN: SessionStateVerdict = { kind: 'pooler-unproven' };

/** What a probe found, and whether it saw a pooler (the first step did not end it). */
export interface ProbeResult {
  verdict: SessionStateVerdict;
  poolerSeen: boolean;
}

/**
 * What `openClient`'s target does with session state, found out on clients of the probe's own.
 * Each step waits at most `limitMs` for the server. `unknown` when the first step (connecting and
 * one round trip) cannot finish: whether there is a pooler at all is then not known.
 */
export async function probeSessionState(
  openClient: () => SqlgateClient,
  limitMs: number,
): Promise<ProbeResult> {
  const listener = openClient();
  listener.on('error', () => undefined);
  let healthy = false;
  try {
    let pid: number;
    try {
      pid = await within(listener, limitMs, async () => {
        await listener.connect();
        return backendPidWith(listener);
      });
    } catch (error) {
      const failure = probeFailure(listener, error);
      return { verdict: { kind: 'unknown', failure }, poolerSeen: false };
    }
    healthy = true;
    if (pid === listener.serverSocket.framing.facts.processId) {
      return { verdict: KEPT, poolerSeen: false };
    }
    try {
      return { verdict: await poolerVerdict(listener, pid, openClient, limitMs), poolerSeen: true };
    } catch {
      healthy = false;
      return { verdict: POOLER_UNPROVEN, poolerSeen: true };
    }
  } finally {
    close(listener, healthy);
  }
}

/**
 * Behind a pooler, whose backend `pid` answered `listener`: `kept` only when a notification to the
 * backend on which `listener` listens reaches it while it sends nothing. Throws when a step
 * cannot finish.
 */
async function poolerVerdict(
  listener: SqlgateClient,
  pid: number,
  openClient: () => SqlgateClient,
  limitMs: number,
): Promise<SessionStateVerdict> {
  const channel = `sqlgate_probe_${randomBytes(8).toString('hex')}`;
  const listening = await within(listener, limitMs, () =>
    backendPidWith(listener, `LISTEN ${channel}`),
  );
  if (listening !== pid) return TRANSACTION_POOLER;
  // From here until the verdict `listener` sends nothing.
  const delivery = new NotificationWatch(listener, channel);
  try {
    if (await notifiedOnBackend(pid, channel, openClient, limitMs)) return TRANSACTION_POOLER;
    return (await delivery.heardWithin(limitMs)) ? KEPT : POOLER_UNPROVEN;
  } finally {
    delivery.stop();
  }
}

/**
 * Runs NOTIFY on `channel` on a client of its own; whether that ran on the listener's backend
 * `pid` (its pid, or the notification came back to it), which only a transaction pooler allows.
 */
async function notifiedOnBackend(
  pid: number,
  channel: string,
  openClient: () => SqlgateClient,
  limitMs: number,
): Promise<boolean> {
  const notifier = openClient();
  notifier.on('error', () => undefined);
  let healthy = false;
  try {
    const onListenersBackend = await within(notifier, limitMs, async () => {
      await notifier.connect();
      const toItself = new NotificationWatch(notifier, channel);
      const notifying = await backendPidWith(notifier, `NOTIFY ${channel}`);
      toItself.stop();
      return notifying === pid || toItself.heard;
    });
    healthy = true;
    return onListenersBackend;
  } finally {
    close(notifier, healthy);
  }
}

/** Whether a client has been sent a notification on one channel since the watch began. */
class NotificationWatch {
  heard = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: SqlgateClient,
    private readonly channel: string,
  ) {
    client.serverSocket.on('notification', this.onNotification);
  }

  /** Whether it is heard by the time `limitMs` have passed from now (at once if it was). */
  async heardWithin(limitMs: number): Promise<boolean> {
    if (this.heard) return true;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      timer = setTimeout(resolve, limitMs);
    });
    clearTimeout(timer);
    return this.heard;
  }

  stop(): void {
    this.client.serverSocket.off('notification', this.onNotification);
  }

  private readonly onNotification = (message: Notification): void => {
    if (message.channel !== this.channel) return;
    this.heard = true;
    this.wake?.();
  };
}

/**
 * The pid of the backend that runs `statement` (if any), read in the same round trip: one implicit
 * transaction, so one backend in every pool mode.
 */
async function backendPidWith(client: SqlgateClient, statement?: string): Promise<number> {
  const rows = await askServer<{ pid?: unknown }>(client.serverSocket, new TypeRegistry(), [
    ...(statement ? [statement] : []),
    'SELECT pg_backend_pid()::text AS pid',
  ]);
  const pid = Number(rows[0]?.pid);
  if (!Number.isInteger(pid)) throw new Error('pg_backend_pid() answered no process id');
  return pid;
}

/** Why the first step failed, as the error a request that needs the verdict is refused with. */
function probeFailure(client: SqlgateClient, error: unknown): ConnectionError {
  const cause = toDomainError(client.serverSocket.fault ?? error, undefined, client.serverSocket);
  if (cause instanceof ConnectionError) return cause;
  // The server refused the probe's login (too many connections...): a failure to connect.
  return new ConnectionError(ErrorCodes.CONNECTION_FAILED, cause.message, cause.sqlState, {
    cause,
  });
}

/**
 * Ends a client that is idle and healthy (a pooler's backend then goes back to its pool rather
 * than being closed); closes the socket of any other.
 */
function close(client: SqlgateClient, healthy: boolean): void {
  if (healthy) void client.end().catch(() => undefined);
  else client.serverSocket.destroy();
}

/**
 * `work` on `client`, whose connection is closed when its server stays silent for `limitMs`:
 * `work` then fails with SERVER_TIMEOUT.
 */
async function within<T>(
  client: SqlgateClient,
  limitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const watchdog = new SilenceWatchdog(client.serverSocket, limitMs, limitMs);
  try {
    return await work();
  } finally {
    watchdog.stop();
  }
}
