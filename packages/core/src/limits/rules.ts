/** Checks of the limits' inputs, and the arithmetic of their answers (docs/limits.md). */
import type { RateRule } from '../ports/limit-store';

/**
 * What a refused `enter` suggests waiting, in milliseconds. A slot is normally freed when a
 * request ends, not when its lease expires, so the hint is the smallest `Retry-After` there is.
 */
export const CONCURRENCY_RETRY_AFTER_MS = 1000;

/** `rule`, when its numbers make a bucket: tokens and perMs positive, burst at least one token. */
export function requireRateRule(rule: RateRule): RateRule {
  const { tokens, perMs, burst } = rule ?? ({} as RateRule);
  if (!(Number.isFinite(tokens) && tokens > 0)) throw new RangeError('tokens must be positive');
  if (!(Number.isFinite(perMs) && perMs > 0)) throw new RangeError('perMs must be positive');
  if (!(Number.isFinite(burst) && burst >= 1)) throw new RangeError('burst must be at least 1');
  return rule;
}

/** `cap`, when it is a positive whole number of slots. */
export function requireConcurrencyCap(cap: number): number {
  if (!(Number.isInteger(cap) && cap >= 1)) throw new RangeError('cap must be a positive integer');
  return cap;
}

/** The `Retry-After` header's value for a refusal: whole seconds, rounded up, at least 1. */
export function retryAfterSeconds(retryAfterMs: number): number {
  const seconds = Math.ceil(retryAfterMs / 1000);
  return Number.isFinite(seconds) && seconds > 1 ? seconds : 1;
}
