/**
 * Gives up on a server that sends nothing, or never finishes (docs/decisions.md 10.6): after
 * `limitMs` of silence the connection is closed and the query fails with SERVER_TIMEOUT.
 */
import type { ServerSocket } from './server-socket';

const MAX_TIMER_MS = 2 ** 31 - 1;

export class SilenceWatchdog {
  private readonly started = performance.now();
  private readonly pausedAtStart: number;
  private timer: NodeJS.Timeout;

  /**
   * `limitMs`: the longest silence. `totalLimitMs`: the longest the whole answer may take, however
   * much the server sends meanwhile.
   */
  constructor(
    private readonly socket: ServerSocket,
    private readonly limitMs: number,
    private readonly totalLimitMs = Number.POSITIVE_INFINITY,
    /**
     * Asks the server to stop the statement, as the connection is closed: a closed socket alone
     * leaves the backend running its statement to the end, holding a server connection no pool
     * counts any more.
     */
    private readonly cancel?: () => void,
  ) {
    this.pausedAtStart = socket.pausedMs;
    this.timer = this.schedule(Math.min(limitMs, totalLimitMs));
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): NodeJS.Timeout {
    // Node's timers take at most 2^31 - 1 ms; a longer delay would fire at once, again and again.
    const timer = setTimeout(() => this.check(), Math.min(Math.max(1, delayMs), MAX_TIMER_MS));
    timer.unref();
    return timer;
  }

  private check(): void {
    // Reading waits for a slow consumer of streamed rows: the server is not silent, it is held.
    if (this.socket.readingPaused) {
      this.timer = this.schedule(this.limitMs);
      return;
    }
    const now = performance.now();
    const silentFor = now - Math.max(this.started, this.socket.lastReceivedAt);
    const runningFor = now - this.started - (this.socket.pausedMs - this.pausedAtStart);
    if (silentFor < this.limitMs && runningFor < this.totalLimitMs) {
      this.timer = this.schedule(
        Math.min(this.limitMs - silentFor, this.totalLimitMs - runningFor),
      );
      return;
    }
    const message =
      silentFor >= this.limitMs
        ? `The server sent nothing for ${Math.round(silentFor)} ms; the connection was closed`
        : `The server did not finish within ${Math.round(runningFor)} ms; the connection was closed`;
    this.cancel?.();
    this.socket.abort(Object.assign(new Error(message), { code: 'SERVER_TIMEOUT' }));
  }
}
