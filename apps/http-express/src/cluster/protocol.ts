/**
 * The messages between the primary and its workers (docs/decisions.md 10.28), each with the guard
 * its receiver checks it with. Requests are answered (`result`); notices are not.
 */
import type { CacheEntrySummary, CounterTotals, InvalidationScope, PoolStat } from '@sqlgate/core';
import {
  anyValue,
  count,
  either,
  empty,
  flag,
  isRecord,
  listOf,
  nonNegative,
  nullable,
  objectOf,
  oneOf,
  text,
  type Guard,
  type Guarded,
} from './guards';

/** A request type: what its payload and its result must look like. */
export interface RequestSpec<Payload, Result> {
  payload: Guard<Payload>;
  result: Guard<Result>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any spec; types come from each
export type RequestProtocol = Record<string, RequestSpec<any, any>>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any notice guard
export type NoticeProtocol = Record<string, Guard<any>>;

export type PayloadOf<S> = S extends RequestSpec<infer P, unknown> ? P : never;
export type ResultOf<S> = S extends RequestSpec<unknown, infer R> ? R : never;

function request<Payload, Result>(
  payload: Guard<Payload>,
  result: Guard<Result>,
): RequestSpec<Payload, Result> {
  return { payload, result };
}

const invalidationScope: Guard<InvalidationScope> = either(
  objectOf({ scope: text }),
  objectOf({ server: text }),
);

/** An invalidation as `CacheStore.invalidate` takes it. */
const invalidation = objectOf({
  where: invalidationScope,
  relations: nullable(listOf(text)),
});

const counterTotals: Guard<CounterTotals> = objectOf({
  hits: count,
  misses: count,
  executed: count,
  executionMs: nonNegative,
});

const poolStat: Guard<PoolStat> = objectOf({
  poolId: text,
  totalConnections: count,
  idleConnections: count,
  activeConnections: count,
  waitingClients: count,
});

/**
 * What the statistics show of a worker's cache entry, without its rows: they can be megabytes,
 * and GET /api/stats/cache lists only the text, time, hits and age.
 */
export type CacheEntryOnTheWire = Omit<CacheEntrySummary, 'cachedAt'> & { cachedAtMs: number };

const cacheEntryOnTheWire: Guard<CacheEntryOnTheWire> = objectOf({
  key: text,
  query: text,
  executionTime: nonNegative,
  cachedAtMs: nonNegative,
  hits: count,
});

/** A sample of prom-client's `getMetricsAsJSON()`; JSON turned a NaN value into null. */
interface MetricSample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

const metricSample: Guard<MetricSample> = (value) => {
  if (!isRecord(value) || !isRecord(value.labels)) return undefined;
  const sample = value.value === null ? NaN : value.value;
  if (typeof sample !== 'number') return undefined;
  const labels: Record<string, string | number> = {};
  for (const [name, label] of Object.entries(value.labels)) {
    if (typeof label !== 'string' && typeof label !== 'number') return undefined;
    labels[name] = label;
  }
  if (value.metricName !== undefined && typeof value.metricName !== 'string') return undefined;
  return {
    value: sample,
    labels,
    ...(value.metricName === undefined ? {} : { metricName: value.metricName }),
  };
};

const AGGREGATORS = ['sum', 'first', 'min', 'max', 'average', 'omit'] as const;

/** One metric of a worker's registry, as prom-client's `AggregatorRegistry.aggregate` takes it. */
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: (typeof AGGREGATORS)[number];
  values: MetricSample[];
}

const metricJson: Guard<MetricJson> = (value) => {
  const fields = objectOf({ name: text, help: text, type: text, values: listOf(metricSample) })(
    value,
  );
  const aggregator = isRecord(value) ? value.aggregator : undefined;
  if (!fields || !AGGREGATORS.includes(aggregator as MetricJson['aggregator'])) return undefined;
  return { ...fields, aggregator: aggregator as MetricJson['aggregator'] };
};

const entries = objectOf({ entries: count });

/**
 * A session route a worker received for a session another worker holds (docs/decisions.md 10.35),
 * as the worker that holds it runs it.
 */
const sessionRequest = objectOf({
  sessionId: text,
  operation: oneOf(['query', 'cancelQuery', 'close'] as const),
  /** The body of a query, as the receiving worker parsed it; null for the others. */
  body: anyValue,
  /** The request's X-Request-Id, and whether its caller chose it (then it may cancel by it). */
  requestId: nullable(text),
  requestIdKnown: oneOf(['from-start', 'when-streaming'] as const),
  /** Names the request until it is answered, so that its caller's going away can follow it. */
  forwardId: count,
});

export type SessionRequest = Guarded<typeof sessionRequest>;

/** An answer made by the worker that ran the request (RenderedAnswer, a defect's made a 500). */
const sessionAnswer = objectOf({
  status: count,
  json: text,
  serverTiming: nullable(text),
  /** Its headers beside Server-Timing: a write's token, and a rate refusal's Retry-After. */
  consistencyToken: nullable(text),
  retryAfterSeconds: nullable(count),
});

export type SessionAnswer = Guarded<typeof sessionAnswer>;

const cancelVerdict = either(objectOf({ cancelled: flag }), objectOf({ retryAfterMs: count }));

/** Requests a worker sends the primary. */
export const WORKER_REQUESTS = {
  /** The worker can take relayed invalidations from now on; it listens only once answered. */
  join: request(empty, empty),
  /** Relay to every other worker; answered once each has applied it (or is gone). */
  invalidate: request(invalidation, empty),
  /** Clear every other worker's cache; answered as `invalidate`. */
  clearCaches: request(empty, empty),
  /** Add the asking worker's pending counts, then answer the sums of all workers. */
  counterTotals: request(objectOf({ pending: counterTotals }), counterTotals),
  cacheSize: request(empty, entries),
  recentEntries: request(
    objectOf({ limit: count }),
    objectOf({ entries: listOf(cacheEntryOnTheWire) }),
  ),
  poolStats: request(empty, objectOf({ pools: listOf(poolStat) })),
  /** Prometheus exposition of every worker's metrics, aggregated. */
  metrics: request(empty, objectOf({ exposition: text })),
  /** Run in the worker holding the session; `answer` is null when no worker holds it. */
  sessionRequest: request(sessionRequest, objectOf({ answer: nullable(sessionAnswer) })),
  /** A cancel by request id, tried in every worker unless its client failed too often (10.34). */
  cancelRequest: request(
    objectOf({ requestId: text, body: anyValue, client: text }),
    cancelVerdict,
  ),
} satisfies RequestProtocol;

/** Requests the primary sends a worker, about that worker alone. */
export const PRIMARY_REQUESTS = {
  applyInvalidation: request(invalidation, empty),
  clearLocalCache: request(empty, empty),
  localCacheSize: request(empty, entries),
  localRecentEntries: request(
    objectOf({ limit: count }),
    objectOf({ entries: listOf(cacheEntryOnTheWire) }),
  ),
  localPoolStats: request(empty, objectOf({ pools: listOf(poolStat) })),
  localMetrics: request(empty, objectOf({ metrics: listOf(metricJson) })),
  /** Whether the worker holds the session (open, ending, or ended lately). */
  holdsSession: request(objectOf({ sessionId: text }), objectOf({ holds: flag })),
  /** Runs a session request another worker received; `forwardId` is the primary's. */
  runSessionRequest: request(sessionRequest, sessionAnswer),
  /** Tries a cancel by request id on the worker's own requests. */
  cancelLocal: request(
    objectOf({ requestId: text, body: anyValue }),
    objectOf({ cancelled: flag }),
  ),
} satisfies RequestProtocol;

/** Notices a worker sends the primary. */
export const WORKER_NOTICES = {
  /** Counts of requests since the last batch (sent every COUNTER_FLUSH_MS at most). */
  counters: counterTotals,
  /** The worker's server listens at `url`. */
  listening: objectOf({ url: text }),
  /** The caller of a session request this worker forwarded went away before its answer. */
  callerGone: objectOf({ forwardId: count }),
} satisfies NoticeProtocol;

export const PRIMARY_NOTICES = {
  /** The caller of a session request the worker runs for another went away (10.7). */
  callerGone: objectOf({ forwardId: count }),
} satisfies NoticeProtocol;

export type WorkerRequests = typeof WORKER_REQUESTS;
export type PrimaryRequests = typeof PRIMARY_REQUESTS;
export type WorkerNotices = typeof WORKER_NOTICES;
export type PrimaryNotices = typeof PRIMARY_NOTICES;
