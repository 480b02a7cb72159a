/**
 * The one ioredis client a RedisCache uses, configured so that no call waits longer than its bound
 * and nothing it does can crash or hold up the process:
 *
 * - a call is refused at once while no connection is being made (Redis down, between reconnect
 *   attempts: `enableOfflineQueue: false`), waits for a connection being made for at most the bound,
 *   and is given up at the bound however far it got (`commandTimeout`, and a deadline of our own
 *   that also covers the wait);
 * - setting a connection up (the HELLO and INFO ioredis sends first) has the longer bound of
 *   connecting: held to a request's bound, a Redis slower than it to set one up (a busy machine, a
 *   distant host) was dropped and dialled again for ever, and never answered anything;
 * - a command in flight when the connection drops fails at once instead of being sent again
 *   (`maxRetriesPerRequest: 0`, `autoResendUnfulfilledCommands: false`);
 * - it reconnects for ever, at most a second apart, so it recovers by itself when Redis returns;
 * - 'error' events are consumed (the failures reach callers as rejections instead), and the socket
 *   and the reconnect timer are unref'd, so an idle connection never keeps the process alive.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { LUA_SCRIPTS, type ScriptName } from './lua-scripts';

/** Why a call to Redis failed: not connected, no answer within the bound, or an error reply. */
export class RedisCacheUnavailableError extends Error {
  override readonly name = 'RedisCacheUnavailableError';
}

/** Bounds how long one connection attempt may hang (a host that drops packets). */
const CONNECT_TIMEOUT_MS = 2000;
/** The longest wait between reconnect attempts. */
const MAX_RECONNECT_DELAY_MS = 1000;
/**
 * A connection that receives nothing for this many command timeouts (and at least a second) while
 * commands wait is taken for dead and replaced: a network partition sends no reset, and without
 * this every call would time out until TCP keepalive noticed, minutes later.
 */
const SILENT_TIMEOUTS_BEFORE_RECONNECT = 20;
const MIN_SOCKET_SILENCE_MS = 1000;

/** Statuses in which a connection is being made, so a call may wait for it. */
const CONNECTING = new Set(['wait', 'connecting', 'connect']);

export class RedisConnection {
  readonly client: Redis;
  private closed = false;
  private readyWait: Promise<void> | undefined;

  constructor(
    url: string,
    readonly timeoutMs: number,
  ) {
    const setupBoundMs = Math.max(timeoutMs, CONNECT_TIMEOUT_MS);
    const options: RedisOptions = {
      commandTimeout: setupBoundMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: CONNECT_TIMEOUT_MS,
      disconnectTimeout: Math.max(timeoutMs, 100),
      socketTimeout: Math.max(MIN_SOCKET_SILENCE_MS, SILENT_TIMEOUTS_BEFORE_RECONNECT * timeoutMs),
      retryStrategy: (attempt) => Math.min(25 * 2 ** Math.min(attempt, 10), MAX_RECONNECT_DELAY_MS),
    };
    this.client = new Redis(url, options);
    // Failures reach the callers of each command as rejections; without a listener, ioredis
    // would print every 'error' event (each failed reconnect) to the console.
    this.client.on('error', () => undefined);
    this.client.on('connect', () => this.client.stream?.unref?.());
    // ioredis reads `commandTimeout` as each command is sent: a connection being set up has the
    // longer bound, a ready one the requests'.
    this.client.on('ready', () => (this.client.options.commandTimeout = timeoutMs));
    this.client.on('close', () => (this.client.options.commandTimeout = setupBoundMs));
    this.client.on('reconnecting', () => unrefReconnectTimer(this.client));
    for (const [name, lua] of Object.entries(LUA_SCRIPTS)) {
      this.client.defineCommand(name, { numberOfKeys: 0, lua });
    }
  }

  /** Runs a script of lua-scripts.ts within the bound (EVALSHA, EVAL when Redis lost it). */
  script(name: ScriptName, args: (string | number)[]): Promise<unknown> {
    return this.run(() => {
      const command = (this.client as unknown as Record<ScriptName, ScriptCommand>)[name];
      return command.apply(this.client, args);
    });
  }

  /** Runs `command` once connected, rejecting with RedisCacheUnavailableError by `boundMs`. */
  async run<T>(command: (client: Redis) => Promise<T>, boundMs = this.timeoutMs): Promise<T> {
    if (this.closed) throw new RedisCacheUnavailableError('The Redis cache is closed');
    const status = this.client.status;
    if (status !== 'ready' && !CONNECTING.has(status)) {
      throw new RedisCacheUnavailableError(`Redis is not connected (${status})`);
    }
    let timer: NodeJS.Timeout | undefined;
    let givenUp = false;
    // Ref'd on purpose: a caller awaiting this call keeps the process up until it settles, which
    // the bound keeps short.
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        givenUp = true;
        reject(new RedisCacheUnavailableError(`Redis did not answer within ${boundMs} ms`));
      }, boundMs);
    });
    const attempt = (async () => {
      if (this.client.status !== 'ready') await this.ready();
      // A command whose caller was already told it failed is not sent once connected.
      if (givenUp) throw new RedisCacheUnavailableError('Given up before Redis was connected');
      return command(this.client);
    })();
    try {
      return await Promise.race([attempt, expired]);
    } catch (error) {
      if (error instanceof RedisCacheUnavailableError) throw error;
      throw new RedisCacheUnavailableError(`Redis failed: ${(error as Error)?.message}`, {
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      // The loser of the race must not become an unhandled rejection.
      attempt.catch(() => undefined);
    }
  }

  /** Resolves when the connection being made is ready; never rejects (the caller's deadline ends the wait). */
  private ready(): Promise<void> {
    this.readyWait ??= new Promise<void>((resolve) => {
      this.client.once('ready', () => {
        this.readyWait = undefined;
        resolve();
      });
    });
    return this.readyWait;
  }

  /** Ends the connection: QUIT within the bound, then closes the socket whatever happened. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.client.status === 'ready') await withinMs(this.client.quit(), this.timeoutMs);
    } catch {
      // Closing is best effort: the socket is closed below in any case.
    } finally {
      this.client.disconnect();
    }
  }
}

type ScriptCommand = (...args: (string | number)[]) => Promise<unknown>;

/** Waits for `pending` at most `ms` milliseconds; its outcome is ignored. */
async function withinMs(pending: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pending.catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * ioredis sets its reconnect timer just before announcing 'reconnecting' and offers no option to
 * unref it; without this, a process whose Redis is down would stay up, retrying, for ever.
 */
function unrefReconnectTimer(client: Redis): void {
  const timer = (client as unknown as { reconnectTimeout?: { unref?: () => void } | null })
    .reconnectTimeout;
  timer?.unref?.();
}
