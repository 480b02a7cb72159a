/**
 * sqlgate's Prometheus metrics (README, Monitoring; docs/decisions.md 10.25), in a registry of
 * their own so that a host app's registry is never touched. Counters and histograms are fed by
 * each request's observer; pool and cache gauges are read from the service when scraped, so a
 * closed pool's series disappear with it. Labels are bounded: routes of the route table, methods,
 * statuses, strategies, first keywords, outcome names, error codes, SQLSTATE classes and pool ids
 * (at most POOL_TARGETS_MAX); never a password, an SQL text or a literal.
 */
import type { PoolAcquireEvent, QueryService, StatementEvent } from '@sqlgate/core';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { commandLabel, methodLabel, poolLabel, sqlStateClass } from './labels';

/** Seconds: from a cached answer (well under a millisecond) to a long report. */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

const MISNAMED_DEFAULT_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Children of a counter and a histogram sharing labels. */
interface CachedSeries {
  count: { inc(): void };
  time: { observe(value: number): void };
}

/** Keys are made of labels, so they are as bounded; this only caps the map in any case. */
const MAX_CACHED_SERIES = 10_000;

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  private readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  private readonly statements: Counter<'strategy' | 'command' | 'outcome'>;
  private readonly statementDuration: Histogram<'strategy' | 'command'>;
  private readonly poolWait: Histogram;
  private readonly poolAcquireTimeouts: Counter;
  private readonly connectionErrors: Counter<'code'>;
  private readonly databaseErrors: Counter<'sqlstate_class'>;
  private readonly cacheHits: Counter;
  private readonly cacheMisses: Counter;
  private readonly cacheBypasses: Counter<'reason'>;
  private readonly streamedRows: Counter<'format'>;
  private readonly streamedBytes: Counter<'format'>;
  private readonly seriesByKey = new Map<string, CachedSeries>();

  constructor(service: QueryService) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // prom-client also names three gauges `_total`, which promtool rejects (a gauge is no counter);
    // their per-type twins (nodejs_active_handles and the like) stay, so nothing is lost.
    for (const name of MISNAMED_DEFAULT_GAUGES) this.registry.removeSingleMetric(name);
    this.httpRequests = new Counter({
      name: 'sqlgate_http_requests_total',
      help: 'HTTP requests answered, by route of the route table (or "unmatched"), method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'sqlgate_http_request_duration_seconds',
      help: 'Time from a request line to the end of its answer (or the client going away).',
      labelNames: ['route', 'method', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.statements = new Counter({
      name: 'sqlgate_statements_total',
      help:
        'Statements handled, by strategy, first keyword and outcome (ok, error, cached, not_run); ' +
        'their sum is totalQueries of GET /api/stats/cache.',
      labelNames: ['strategy', 'command', 'outcome'],
      registers,
    });
    this.statementDuration = new Histogram({
      name: 'sqlgate_statement_duration_seconds',
      help: 'Time statements took in PostgreSQL (those that ran, failed ones included).',
      labelNames: ['strategy', 'command'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.poolWait = new Histogram({
      name: 'sqlgate_pool_wait_duration_seconds',
      help: 'Time spent waiting for a pooled connection (connecting included).',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.poolAcquireTimeouts = new Counter({
      name: 'sqlgate_pool_acquire_timeouts_total',
      help:
        'Waits for a pooled connection that ended after POOL_WAIT_TIMEOUT_MS (POOL_EXHAUSTED); ' +
        'a request that runs reads in parallel may wait for several.',
      registers,
    });
    this.connectionErrors = new Counter({
      name: 'sqlgate_connection_errors_total',
      help:
        'Connections that could not be had or were lost, by error code (CONNECTION_FAILED, ' +
        'CONNECT_TIMEOUT, SERVER_TIMEOUT, PROTOCOL_ERROR).',
      labelNames: ['code'],
      registers,
    });
    this.databaseErrors = new Counter({
      name: 'sqlgate_database_errors_total',
      help: 'Errors PostgreSQL answered, by SQLSTATE class (the first two characters).',
      labelNames: ['sqlstate_class'],
      registers,
    });
    this.cacheHits = new Counter({
      name: 'sqlgate_cache_hits_total',
      help: 'Statements served from the result cache (cacheHits of GET /api/stats/cache).',
      registers,
    });
    this.cacheMisses = new Counter({
      name: 'sqlgate_cache_misses_total',
      help: 'Statements looked up in the result cache in vain, then run.',
      registers,
    });
    this.cacheBypasses = new Counter({
      name: 'sqlgate_cache_bypasses_total',
      help:
        'Statements that ran without the result cache, by reason (disabled, stream, write, ' +
        'transaction, volatile, oversize, unavailable). Hits, misses and bypasses add up to the ' +
        'statements that ran or were served; cacheMisses of GET /api/stats/cache also counts ' +
        'those not run.',
      labelNames: ['reason'],
      registers,
    });
    this.streamedRows = new Counter({
      name: 'sqlgate_streamed_rows_total',
      help: 'Rows written in streamed answers, by format (ndjson, csv).',
      labelNames: ['format'],
      registers,
    });
    this.streamedBytes = new Counter({
      name: 'sqlgate_streamed_bytes_total',
      help: 'Bytes written in streamed answers, by format (ndjson, csv, copy).',
      labelNames: ['format'],
      registers,
    });
    this.addServiceGauges(service, registers);
  }

  httpRequest(route: string, method: string | undefined, status: number, seconds: number): void {
    const methodName = methodLabel(method);
    const series = this.series(`${route} ${methodName} ${status}`, () => {
      const labels = [route, methodName, String(status)];
      return {
        count: this.httpRequests.labels(...labels),
        time: this.httpDuration.labels(...labels),
      };
    });
    series.count.inc();
    series.time.observe(seconds);
  }

  poolAcquired(event: PoolAcquireEvent): void {
    this.poolWait.observe((event.endMs - event.startMs) / 1000);
    const { failureCode, sqlState } = event;
    if (failureCode === undefined || failureCode === 'REQUEST_ABORTED') return;
    if (event.timedOut) this.poolAcquireTimeouts.inc();
    else if (sqlState !== undefined) {
      this.databaseErrors.inc({ sqlstate_class: sqlStateClass(sqlState) });
    } else this.connectionErrors.inc({ code: failureCode });
  }

  statementEnded(event: StatementEvent): void {
    const { strategy, outcome } = event;
    const command = commandLabel(event.command);
    const series = this.series(`${strategy} ${command} ${outcome}`, () => {
      return {
        count: this.statements.labels(strategy, command, outcome),
        time: this.statementDuration.labels(strategy, command),
      };
    });
    series.count.inc();
    const { cache } = event;
    if (cache?.status === 'hit') this.cacheHits.inc();
    else if (cache?.status === 'miss') this.cacheMisses.inc();
    else if (cache?.status === 'bypass') this.cacheBypasses.inc({ reason: cache.reason });
    if (outcome === 'ok' || outcome === 'error') series.time.observe(event.durationMs / 1000);
    if (event.sqlState !== undefined) {
      this.databaseErrors.inc({ sqlstate_class: sqlStateClass(event.sqlState) });
    } else if (event.errorCode !== undefined && event.errorCode !== 'REQUEST_ABORTED') {
      this.connectionErrors.inc({ code: event.errorCode });
    }
  }

  /**
   * The children of a label combination, kept: prom-client hashes the labels on every call
   * otherwise, which costs more than the count itself. Keys are bounded as the labels are (the
   * command is counted as OTHER past the fixed list, but its key holds the keyword: the cache is
   * cleared when it grows past MAX_CACHED_SERIES).
   */
  private series(key: string, make: () => CachedSeries): CachedSeries {
    let found = this.seriesByKey.get(key);
    if (found === undefined) {
      if (this.seriesByKey.size >= MAX_CACHED_SERIES) this.seriesByKey.clear();
      found = make();
      this.seriesByKey.set(key, found);
    }
    return found;
  }

  streamed(format: string, rows: number, bytes: number): void {
    if (rows > 0) this.streamedRows.inc({ format }, rows);
    if (bytes > 0) this.streamedBytes.inc({ format }, bytes);
  }

  /** Gauges read from the service at each scrape: pools as they are now, the cache's usage. */
  private addServiceGauges(service: QueryService, registers: Registry[]): void {
    new Gauge({
      name: 'sqlgate_pool_connections',
      help: 'Connections of each pool by state (total, idle, active), as GET /api/stats/pools.',
      labelNames: ['pool', 'state'],
      registers,
      collect() {
        this.reset();
        for (const pool of service.poolStats()) {
          const label = poolLabel(pool.poolId);
          this.set({ pool: label, state: 'total' }, pool.totalConnections);
          this.set({ pool: label, state: 'idle' }, pool.idleConnections);
          this.set({ pool: label, state: 'active' }, pool.activeConnections);
        }
      },
    });
    new Gauge({
      name: 'sqlgate_pool_waiting_clients',
      help: 'Requests waiting for a connection of each pool.',
      labelNames: ['pool'],
      registers,
      collect() {
        this.reset();
        for (const pool of service.poolStats()) {
          this.set({ pool: poolLabel(pool.poolId) }, pool.waitingClients);
        }
      },
    });
    // One read of the store per scrape feeds the three cache gauges.
    let usage: ReturnType<QueryService['cacheUsage']> | undefined;
    const readUsage = (): ReturnType<QueryService['cacheUsage']> => {
      usage ??= service.cacheUsage().finally(() => {
        usage = undefined;
      });
      return usage;
    };
    const cacheGauge = (name: string, help: string, pick: 'entries' | 'bytes') =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set((await readUsage())[pick]);
        },
      });
    cacheGauge('sqlgate_cache_entries', 'Live entries of the result cache.', 'entries');
    cacheGauge('sqlgate_cache_bytes', 'Bytes (JSON length) of the live cache entries.', 'bytes');
    // The store counts evictions; the counter follows it by the difference since the last scrape.
    let evictionsSeen = 0;
    new Counter({
      name: 'sqlgate_cache_evictions_total',
      help: 'Entries removed from the result cache to make room.',
      registers,
      async collect() {
        const { evictions } = await readUsage();
        if (evictions > evictionsSeen) this.inc(evictions - evictionsSeen);
        evictionsSeen = Math.max(evictionsSeen, evictions);
      },
    });
  }
}
