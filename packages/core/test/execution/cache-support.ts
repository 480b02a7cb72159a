/** Shared by the result-cache tests of the execution layer. */
import type { CacheStore } from '../../src/ports/cache-store';
import type { Clock } from '../../src/ports/clock';

/** The service's wall clock, moved forward by `shiftMs`: cached entries age without waiting. */
export function shiftedClock(): Clock & { shiftMs: number } {
  const clock = {
    shiftMs: 0,
    now: () => performance.now(),
    date: () => new Date(Date.now() + clock.shiftMs),
  };
  return clock;
}

/** The results of a response body: `results` of several statements, or the body of one. */
export function resultsOf(body: unknown): Record<string, unknown>[] {
  const shaped = body as { results?: Record<string, unknown>[] };
  return shaped.results ?? [body as Record<string, unknown>];
}

/** A store whose every call fails (Redis away), except those `answering` overrides. */
export function failingStore(answering: Partial<CacheStore> = {}): CacheStore {
  const down = () => Promise.reject(new Error('store down'));
  return {
    get: down,
    mark: down,
    set: down,
    invalidate: down,
    clear: down,
    size: down,
    recent: down,
    ...answering,
  };
}
