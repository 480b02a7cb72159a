/**
 * The token bucket's arithmetic, shared by the memory store and mirrored by the Redis store's
 * script (docs/limits.md). A bucket is refilled lazily: its level is computed from the last one
 * and the time since, when it is next used.
 */
import type { LimitDecision, RateRule } from '../ports/limit-store';

export interface BucketState {
  /** Tokens left at `updatedAt` (fractional: refill is continuous). */
  tokens: number;
  updatedAt: number;
  /** When the bucket is full again, so that it can be forgotten: a full bucket is no bucket. */
  fullAt: number;
}

/**
 * Tolerance of the float arithmetic: 0.7 * 1000 / 10 is 70.00000000000001, which would round a
 * wait of 70 ms up to 71.
 */
const EPSILON = 1e-9;

/** The tokens in `bucket` at `now` (a bucket never seen is full). A clock going back refills nothing. */
export function levelAt(bucket: BucketState | undefined, rule: RateRule, now: number): number {
  if (bucket === undefined) return rule.burst;
  const elapsed = Math.max(0, now - bucket.updatedAt);
  return Math.min(rule.burst, bucket.tokens + (elapsed * rule.tokens) / rule.perMs);
}

/** Milliseconds until `level` reaches `target` tokens under `rule`, rounded up; 0 when already there. */
export function msUntilLevel(level: number, target: number, rule: RateRule): number {
  const ms = ((target - level) * rule.perMs) / rule.tokens;
  return ms <= EPSILON ? 0 : Math.ceil(ms - EPSILON);
}

/**
 * Takes one token at `now`: the bucket's new state, or the wait until a token is back (at least
 * 1 ms, so that a refusal never says "now").
 */
export function takeToken(
  bucket: BucketState | undefined,
  rule: RateRule,
  now: number,
): { decision: LimitDecision; next?: BucketState } {
  const level = levelAt(bucket, rule, now);
  if (level < 1 - EPSILON) {
    return { decision: { ok: false, retryAfterMs: Math.max(1, msUntilLevel(level, 1, rule)) } };
  }
  const tokens = Math.max(0, level - 1);
  return {
    decision: { ok: true },
    next: { tokens, updatedAt: now, fullAt: now + msUntilLevel(tokens, rule.burst, rule) },
  };
}
