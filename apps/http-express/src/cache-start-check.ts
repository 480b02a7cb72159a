/**
 * Says at start when the result cache's Redis does not answer (docs/decisions.md 10.40): a Redis
 * that is down or misconfigured (QUERY_CACHE_REDIS_URL) costs no request, every statement then
 * runs uncached, which nobody would otherwise notice. Logged once as an error, checked again every
 * second until Redis answers, which is logged too. `/healthz` asks the service itself.
 */
import type { QueryService } from '@sqlgate/core';
import type { Logger } from 'pino';

export const CACHE_UNAVAILABLE_MESSAGE =
  "the result cache's Redis (QUERY_CACHE_REDIS_URL) does not answer: statements run uncached, and /healthz says degraded, until it does";
export const CACHE_AVAILABLE_MESSAGE = "the result cache's Redis answers: results are cached";

const RECHECK_MS = 1000;

/** Checks the cache now, and until it answers if it does not; the returned function stops. */
export function reportCacheAtStart(service: QueryService, logger: Logger): () => void {
  let stopped = false;
  let reported = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    const health = await service.cacheHealth();
    if (stopped) return;
    if (health.available) {
      if (reported) logger.info(CACHE_AVAILABLE_MESSAGE);
      return;
    }
    if (!reported) logger.error({ reason: health.reason }, CACHE_UNAVAILABLE_MESSAGE);
    reported = true;
    // Unref'd: checking must not keep a process alive that has nothing else to do.
    timer = setTimeout(() => void check().catch(() => undefined), RECHECK_MS).unref();
  };
  void check().catch(() => undefined);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
