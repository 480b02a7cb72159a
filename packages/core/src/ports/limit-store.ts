/**
 * The API-key limits port (docs/limits.md): a token-bucket rate and a cap on concurrent requests,
 * per key. Asynchronous so a shared store (Redis) can implement it.
 */

/** A token bucket: `tokens` refilled every `perMs`, continuously, holding at most `burst`. "50/s" is `{ tokens: 50, perMs: 1000, burst: 50 }`. */
export interface RateRule {
  tokens: number;
  perMs: number;
  burst: number;
}

export type LimitDecision = { ok: true } | { ok: false; retryAfterMs: number };

/** One held slot of a concurrency cap. */
export interface ConcurrencySlot {
  /** Gives the slot back. Idempotent: a second call does nothing. */
  release(): void;
}

export interface LimitStore {
  /** Takes one token from the bucket `key` under `rule`; when empty, refuses with the time until one token is back. */
  take(key: string, rule: RateRule): Promise<LimitDecision>;
  /** Holds one of `cap` slots of `key` until release(); refuses when all are held (retryAfterMs: a hint, at least 1000). */
  enter(
    key: string,
    cap: number,
  ): Promise<{ ok: true; slot: ConcurrencySlot } | { ok: false; retryAfterMs: number }>;
  close?(): Promise<void>;
}
