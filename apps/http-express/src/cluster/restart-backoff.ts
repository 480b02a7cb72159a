/**
 * How long the primary waits before replacing a worker that died: briefly at first, twice as long
 * after each death that follows a short life, so a worker that cannot live (a broken start, a
 * crash on every request) is retried at a slow pace instead of in a tight loop.
 */
export interface RestartBackoffOptions {
  /** Delay after a first death. */
  firstDelayMs: number;
  /** The longest delay. */
  maxDelayMs: number;
  /** A worker that lived this long died of something new: the delay starts over. */
  stableAfterMs: number;
}

const DEFAULT_RESTART_BACKOFF: RestartBackoffOptions = {
  firstDelayMs: 100,
  maxDelayMs: 5_000,
  stableAfterMs: 10_000,
};

export class RestartBackoff {
  private shortLives = 0;

  constructor(private readonly options: RestartBackoffOptions = DEFAULT_RESTART_BACKOFF) {}

  /** The delay before replacing a worker that lived `livedMs`. */
  delayAfter(livedMs: number): number {
    if (livedMs >= this.options.stableAfterMs) this.shortLives = 0;
    const delay = Math.min(
      this.options.maxDelayMs,
      this.options.firstDelayMs * 2 ** Math.min(this.shortLives, 30),
    );
    this.shortLives += 1;
    return delay;
  }
}
