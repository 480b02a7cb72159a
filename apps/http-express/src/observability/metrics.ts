/**
 * sqlgate's Prometheus metrics (README, Monitoring; docs/decisions.md 10.25), in a registry of
 * their own so that a host app's registry is never touched. Counters and histograms are fed by
 * each request's observer; pool and cache gauges are read from the service when scraped, so a
 * closed pool's series disappear with it. Labels are bounded: routes of the route table, methods,
 * statuses, strategies, first keywords, outcome names, error codes, SQLSTATE classes and pool ids
 * (at most POOL_TARGETS_MAX); never a password, an SQL text or a literal.
 */
import type {
  PoolAcquireEvent,
  PoolStat,
  QueryService,
  RequestFailureEvent,
  SessionStatistics,
  StatementEvent,
} from '@sqlgate/core';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { commandLabel, methodLabel, poolLabel, sqlStateClass } from './labels';
import {
  SeriesCounter,
  SeriesHistogram,
  type CounterSeries,
  type HistogramSeries,
} from './series-metrics';

/** Seconds: from a cached answer (well under a millisecond) to a long report. */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

const MISNAMED_DEFAULT_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** A counter's and a histogram's series of the same labels, found with one lookup. */
interface CountedAndTimed {
  count: CounterSeries;
  time: HistogramSeries;
}

/** The series under `key`, made by `make` on first use. */
function seriesOf(
  byKey: Map<string, CountedAndTimed>,
  key: string,
  make: () => CountedAndTimed,
): CountedAndTimed {
  let series = byKey.get(key);
  if (series === undefined) {
    series = make();
    byKey.set(key, series);
  }
  return series;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly httpRequests = new SeriesCounter(
    'sqlgate_http_requests_total',
    'HTTP requests answered, by route of the route table (or "unmatched"), method and status; ' +
      "also the bytes Node's parser refused (unmatched, OTHER), which have no duration.",
    ['route', 'method', 'status'],
  );
  private readonly httpDuration = new SeriesHistogram(
    'sqlgate_http_request_duration_seconds',
    'Time from a request line to the end of its answer (or the client going away).',
    ['route', 'method', 'status'],
    DURATION_BUCKETS,
  );
  private readonly statements = new SeriesCounter(
    'sqlgate_statements_total',
    'Statements handled, by strategy, first keyword and outcome (ok, error, cached, not_run); ' +
      'their sum is totalQueries of GET /api/stats/cache.',
    ['strategy', 'command', 'outcome'],
  );
  private readonly statementDuration = new SeriesHistogram(
    'sqlgate_statement_duration_seconds',
    'Time statements took in PostgreSQL (those that ran, failed ones included).',
    ['strategy', 'command'],
    DURATION_BUCKETS,
  );
  private readonly poolWait = new SeriesHistogram(
    'sqlgate_pool_wait_duration_seconds',
    'Time spent waiting for a pooled connection (connecting included).',
    [],
    DURATION_BUCKETS,
  );
  private readonly poolAcquireTimeouts = new SeriesCounter(
    'sqlgate_pool_acquire_timeouts_total',
    'Waits for a pooled connection that ended after POOL_WAIT_TIMEOUT_MS (POOL_EXHAUSTED); ' +
      'a request that runs reads in parallel may wait for several.',
  );
  private readonly connectionErrors = new SeriesCounter(
    'sqlgate_connection_errors_total',
    'Connections that could not be had or were lost, by error code (CONNECTION_FAILED, ' +
      'CONNECT_TIMEOUT, SERVER_TIMEOUT, PROTOCOL_ERROR).',
    ['code'],
  );
  private readonly databaseErrors = new SeriesCounter(
    'sqlgate_database_errors_total',
    'Errors PostgreSQL answered, by SQLSTATE class (the first two characters).',
    ['sqlstate_class'],
  );
  private readonly cacheHits = new SeriesCounter(
    'sqlgate_cache_hits_total',
    'Statements served from the result cache, stale ones included (cacheHits of GET /api/stats/cache).',
  );
  private readonly cacheMisses = new SeriesCounter(
    'sqlgate_cache_misses_total',
    'Statements looked up in the result cache in vain, then run.',
  );
  private readonly cacheBypasses = new SeriesCounter(
    'sqlgate_cache_bypasses_total',
    'Statements that ran without the result cache, by reason (disabled, stream, write, ' +
      'transaction, volatile, oversize, unavailable). Hits, misses and bypasses add up to the ' +
      'statements that ran or were served; cacheMisses of GET /api/stats/cache also counts ' +
      'those not run.',
    ['reason'],
  );
  private readonly streamedRows = new SeriesCounter(
    'sqlgate_streamed_rows_total',
    'Rows written in streamed answers, by format (ndjson, csv).',
    ['format'],
  );
  private readonly streamedBytes = new SeriesCounter(
    'sqlgate_streamed_bytes_total',
    'Bytes written in streamed answers, by format (ndjson, csv, copy).',
    ['format'],
  );
  private readonly accessRefusals = new SeriesCounter(
    'sqlgate_access_refusals_total',
    'Requests refused by server-side access (docs/decisions.md 12), by reason: unauthorized ' +
      '(no, unknown or invalid credentials), forbidden, rate_limited, concurrency_limited.',
    ['reason'],
  );
  private readonly replicaReads = new SeriesCounter(
    'sqlgate_replica_reads_total',
    'Reads of a named connection with replicas (docs/decisions.md 13), by connection and where ' +
      'they ran (primary, replica).',
    ['connection', 'served_by'],
  );
  private readonly consistencyWaits = new SeriesCounter(
    'sqlgate_consistency_waits_total',
    'Reads bearing a consistency token, by connection and outcome: replica (caught up already), ' +
      'replica_after_wait, primary (none caught up within CONSISTENCY_WAIT_MS).',
    ['connection', 'outcome'],
  );
  private readonly replicaLagGauge = new Gauge({
    name: 'sqlgate_replica_lag_seconds',
    help:
      "A replica's lag as the last check saw it, by connection and replica (its place in the " +
      "connection's replicas); absent while not known (unreachable, promoted).",
    labelNames: ['connection', 'replica'],
    // Each worker of WORKERS=n checks the lag itself: /metrics shows the largest any saw, not a sum.
    aggregator: 'max',
    registers: [],
  });
  /** Series by a key of their labels, so that a request's counts cost one lookup each. */
  private readonly httpSeries = new Map<string, CountedAndTimed>();
  private readonly statementSeries = new Map<string, CountedAndTimed>();
  private readonly poolWaitSeries = this.poolWait.series();

  constructor(service: QueryService, options: { sharedCache?: boolean } = {}) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client also names three gauges `_total`, which promtool rejects (a gauge is no counter);
    // their per-type twins (nodejs_active_handles and the like) stay, so nothing is lost.
    for (const name of MISNAMED_DEFAULT_GAUGES) this.registry.removeSingleMetric(name);
    for (const metric of [
      this.httpRequests,
      this.httpDuration,
      this.statements,
      this.statementDuration,
      this.poolWait,
      this.poolAcquireTimeouts,
      this.connectionErrors,
      this.databaseErrors,
      this.cacheHits,
      this.cacheMisses,
      this.cacheBypasses,
      this.streamedRows,
      this.streamedBytes,
      this.accessRefusals,
      this.replicaReads,
      this.consistencyWaits,
      this.replicaLagGauge,
    ]) {
      this.registry.registerMetric(metric as never);
    }
    // Counters without labels show 0 before their first count, as prom-client's do.
    for (const counter of [this.poolAcquireTimeouts, this.cacheHits, this.cacheMisses]) {
      counter.series();
    }
    this.addServiceGauges(service, [this.registry], options.sharedCache ?? false);
  }

  httpRequest(route: string, method: string | undefined, status: number, seconds: number): void {
    const methodName = methodLabel(method);
    const series = seriesOf(this.httpSeries, `${route} ${methodName} ${status}`, () => {
      const labels = [route, methodName, String(status)];
      return {
        count: this.httpRequests.series(...labels),
        time: this.httpDuration.series(...labels),
      };
    });
    series.count.value += 1;
    this.httpDuration.observe(series.time, seconds);
  }

  /**
   * An answer given without a request sqlgate served: Node's parser refused the bytes, or the
   * request asked for what no route does (an Expect, CONNECT). Counted, not timed: for a refusal
   * of the parser the request's start is unknown.
   */
  httpRefused(route: string, method: string | undefined, status: number): void {
    this.httpRequests.series(route, methodLabel(method), String(status)).value += 1;
  }

  poolAcquired(event: PoolAcquireEvent): void {
    this.poolWait.observe(this.poolWaitSeries, (event.endMs - event.startMs) / 1000);
    const { failureCode, sqlState } = event;
    if (failureCode === undefined || failureCode === 'REQUEST_ABORTED') return;
    if (event.timedOut) this.poolAcquireTimeouts.series().value += 1;
    else if (sqlState !== undefined) {
      this.databaseErrors.series(sqlStateClass(sqlState)).value += 1;
    } else this.connectionErrors.series(failureCode).value += 1;
  }

  statementEnded(event: StatementEvent): void {
    const { strategy, outcome } = event;
    const command = commandLabel(event.command);
    const series = seriesOf(this.statementSeries, `${strategy} ${command} ${outcome}`, () => ({
      count: this.statements.series(strategy, command, outcome),
      time: this.statementDuration.series(strategy, command),
    }));
    series.count.value += 1;
    if (outcome === 'ok' || outcome === 'error') {
      this.statementDuration.observe(series.time, event.durationMs / 1000);
    }
    const { cache } = event;
    // A stale entry is served from the cache too (cacheHits of GET /api/stats/cache counts it).
    if (cache?.status === 'hit' || cache?.status === 'stale') this.cacheHits.series().value += 1;
    else if (cache?.status === 'miss') this.cacheMisses.series().value += 1;
    else if (cache?.status === 'bypass') this.cacheBypasses.series(cache.reason).value += 1;
    if (event.sqlState !== undefined) {
      this.databaseErrors.series(sqlStateClass(event.sqlState)).value += 1;
    } else if (event.errorCode !== undefined && event.errorCode !== 'REQUEST_ABORTED') {
      this.connectionErrors.series(event.errorCode).value += 1;
    }
  }

  requestFailed(event: RequestFailureEvent): void {
    if (event.sqlState !== undefined) {
      this.databaseErrors.series(sqlStateClass(event.sqlState)).value += 1;
    } else this.connectionErrors.series(event.errorCode).value += 1;
  }

  streamed(format: string, rows: number, bytes: number): void {
    if (rows > 0) this.streamedRows.series(format).value += rows;
    if (bytes > 0) this.streamedBytes.series(format).value += bytes;
  }

  accessRefused(reason: string): void {
    this.accessRefusals.series(reason).value += 1;
  }

  replicaRouted(connection: string, servedBy: string): void {
    this.replicaReads.series(connection, servedBy).value += 1;
  }

  consistencyWait(connection: string, outcome: string): void {
    this.consistencyWaits.series(connection, outcome).value += 1;
  }

  replicaLag(connection: string, replica: number, lagMs: number | undefined): void {
    const labels = { connection, replica: String(replica) };
    if (lagMs === undefined) this.replicaLagGauge.remove(labels);
    else this.replicaLagGauge.set(labels, lagMs / 1000);
  }

  /** Gauges read from the service at each scrape: pools as they are now, the cache's usage. */
  private addServiceGauges(
    service: QueryService,
    registers: Registry[],
    sharedCache: boolean,
  ): void {
    addPoolGauges(service, registers);
    addSessionGauges(service, registers);
    addCacheGauges(service, registers, sharedCache);
  }
}

/** The pools' connections and waiting requests, as GET /api/stats/pools. */
function addPoolGauges(service: QueryService, registers: Registry[]): void {
  // One reading of the pools per scrape feeds both pool gauges (their ids may be long).
  let pools: { label: string; stat: PoolStat }[] | undefined;
  const readPools = () => {
    if (pools === undefined) {
      pools = service.poolStats().map((stat) => ({ label: poolLabel(stat.poolId), stat }));
      setImmediate(() => (pools = undefined));
    }
    return pools;
  };
  new Gauge({
    name: 'sqlgate_pool_connections',
    help: 'Connections of each pool by state (total, idle, active), as GET /api/stats/pools.',
    labelNames: ['pool', 'state'],
    registers,
    collect() {
      this.reset();
      for (const { label, stat } of readPools()) {
        this.set({ pool: label, state: 'total' }, stat.totalConnections);
        this.set({ pool: label, state: 'idle' }, stat.idleConnections);
        this.set({ pool: label, state: 'active' }, stat.activeConnections);
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
      for (const { label, stat } of readPools()) this.set({ pool: label }, stat.waitingClients);
    },
  });
}

/** Sessions (docs/decisions.md 10.26): open now, and opened and ended since the start. */
function addSessionGauges(service: QueryService, registers: Registry[]): void {
  let openedSeen = 0;
  const endedSeen: Partial<SessionStatistics['ended']> = {};
  new Gauge({
    name: 'sqlgate_sessions_open',
    help: 'Sessions open now; each holds one connection, counted active in its pool.',
    registers,
    collect() {
      this.set(service.sessionStatistics().open);
    },
  });
  new Counter({
    name: 'sqlgate_sessions_opened_total',
    help: 'Sessions opened (POST /api/sessions).',
    registers,
    collect() {
      const { opened } = service.sessionStatistics();
      if (opened > openedSeen) this.inc(opened - openedSeen);
      openedSeen = Math.max(openedSeen, opened);
    },
  });
  new Counter({
    name: 'sqlgate_sessions_ended_total',
    help:
      'Sessions ended, by reason: closed (DELETE), idle (SESSION_IDLE_TIMEOUT_MS), lifetime ' +
      '(SESSION_MAX_LIFETIME_MS), broken (connection lost), shutdown.',
    labelNames: ['reason'],
    registers,
    collect() {
      const { ended } = service.sessionStatistics();
      for (const reason of Object.keys(ended) as (keyof typeof ended)[]) {
        this.inc({ reason }, ended[reason] - (endedSeen[reason] ?? 0));
        endedSeen[reason] = ended[reason];
      }
    },
  });
}

/** The result cache's entries, bytes and evictions. */
function addCacheGauges(service: QueryService, registers: Registry[], sharedCache: boolean): void {
  // One read of the store per scrape feeds the three cache gauges. A store that cannot answer
  // (Redis down) leaves them as they were: the rest of the scrape must still succeed, since
  // that is when operators look.
  type Usage = Awaited<ReturnType<QueryService['cacheUsage']>>;
  let usage: Promise<Usage | undefined> | undefined;
  const readUsage = (): Promise<Usage | undefined> => {
    usage ??= service
      .cacheUsage()
      .catch(() => undefined)
      .finally(() => {
        usage = undefined;
      });
    return usage;
  };
  const cacheGauge = (name: string, help: string, pick: 'entries' | 'bytes') =>
    new Gauge({
      name,
      help,
      registers,
      // Aggregated over workers (WORKERS=n): their own caches add up, a shared one does not.
      aggregator: sharedCache ? 'max' : 'sum',
      async collect() {
        const current = await readUsage();
        if (current) this.set(current[pick]);
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
      const evictions = (await readUsage())?.evictions ?? evictionsSeen;
      if (evictions > evictionsSeen) this.inc(evictions - evictionsSeen);
      evictionsSeen = Math.max(evictionsSeen, evictions);
    },
  });
}
