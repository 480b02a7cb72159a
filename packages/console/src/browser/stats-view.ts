/**
 * The statistics view: pools and result cache from GET /api/stats/pools and GET /api/stats/cache,
 * refreshed every few seconds while the view shows, with a chart of the cache hit rate and of the
 * statements counted over the last minutes. "Clear cache" calls DELETE /api/stats/cache.
 */
import { statsCall, type JsonAnswer } from './api';
import {
  addSample,
  chartSpan,
  polylinePoints,
  queriesPerInterval,
  type StatsSample,
} from './chart';
import { button, h, svg } from './dom';

export const STATS_REFRESH_MS = 3000;
/** While another view shows, samples are still taken, less often, so the chart covers that time. */
export const STATS_BACKGROUND_REFRESH_MS = 15_000;
const CHART_WIDTH = 600;
const CHART_HEIGHT = 120;
const TOKEN_KEY = 'sqlgate.console.statsToken';

interface PoolStat {
  poolId: string;
  totalConnections: number;
  idleConnections: number;
  activeConnections: number;
  waitingClients: number;
}

interface CacheAnswer {
  stats: Record<string, number>;
  entries: { query: string; executionTime: number; timestamp: string; hits: number }[];
}

export class StatsView {
  readonly element: HTMLElement;
  private readonly status = h('p', { className: 'stats-status', attrs: { role: 'status' } });
  private readonly cacheFigures = h('dl', {
    className: 'figures',
    attrs: { 'data-testid': 'cache-figures' },
  });
  private readonly pools = h('tbody');
  private readonly entries = h('tbody');
  private readonly hitRateLine = svg('polyline', { class: 'line-hit-rate', points: '' });
  private readonly queriesLine = svg('polyline', { class: 'line-queries', points: '' });
  private readonly chartScale = h('span', { className: 'chart-scale' });
  private readonly tokenInput: HTMLInputElement;
  private samples: StatsSample[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor() {
    this.tokenInput = h('input', {
      attrs: { type: 'password', id: 'stats-token', autocomplete: 'off' },
      on: { change: () => this.saveTokenAndRefresh() },
    });
    this.tokenInput.value = sessionStorage.getItem(TOKEN_KEY) ?? '';
    const chart = svg('svg', {
      class: 'chart',
      viewBox: `0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`,
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': 'Cache hit rate and statements counted over the last minutes',
    });
    chart.append(this.hitRateLine, this.queriesLine);
    this.element = h('section', { className: 'stats', attrs: { 'aria-label': 'Statistics' } }, [
      h('div', { className: 'toolbar' }, [
        button('Refresh', () => void this.refresh()),
        button('Clear cache', () => void this.clearCache(), { 'data-testid': 'clear-cache' }),
        h('label', { className: 'token', attrs: { for: 'stats-token' } }, ['Statistics token ']),
        this.tokenInput,
      ]),
      this.status,
      h('h2', { text: 'Result cache' }),
      this.cacheFigures,
      h('figure', { className: 'chart-figure' }, [
        chart,
        h('figcaption', {}, [
          h('span', { className: 'legend legend-hit-rate', text: 'hit rate (0–100 %)' }),
          h('span', { className: 'legend legend-queries', text: 'statements per refresh' }),
          this.chartScale,
        ]),
      ]),
      h('h2', { text: 'Pools' }),
      table(['Pool', 'Total', 'Idle', 'Active', 'Waiting'], this.pools, 'pools'),
      h('h2', { text: 'Recently cached' }),
      table(['Statement', 'ms', 'Hits', 'Cached at'], this.entries, 'cache-entries'),
    ]);
  }

  /** Refreshes every few seconds (the view shows). */
  show(): void {
    void this.refresh();
    this.refreshEvery(STATS_REFRESH_MS);
  }

  /** Samples for the chart now and then (another view shows). */
  hide(): void {
    this.refreshEvery(STATS_BACKGROUND_REFRESH_MS);
  }

  private refreshEvery(ms: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.refresh(), ms);
  }

  async refresh(): Promise<void> {
    const token = this.tokenInput.value;
    try {
      const [pools, cache] = await Promise.all([
        statsCall('api/stats/pools', token),
        statsCall('api/stats/cache', token),
      ]);
      const failed = [pools, cache].find((answer) => answer.status !== 200);
      if (failed) {
        this.showFailure(failed);
        return;
      }
      this.status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
      this.showPools((pools.body.stats as PoolStat[] | undefined) ?? []);
      this.showCache(cache.body as unknown as CacheAnswer);
    } catch (error) {
      this.status.textContent = `sqlgate could not be reached: ${String(error)}`;
    }
  }

  private async clearCache(): Promise<void> {
    const answer = await statsCall('api/stats/cache', this.tokenInput.value, 'DELETE').catch(
      (error: unknown): JsonAnswer => ({ status: 0, body: { error: String(error) } }),
    );
    if (answer.status !== 200) {
      this.showFailure(answer);
      return;
    }
    await this.refresh();
    this.status.textContent = 'Cache cleared';
  }

  private saveTokenAndRefresh(): void {
    sessionStorage.setItem(TOKEN_KEY, this.tokenInput.value);
    void this.refresh();
  }

  private showFailure(answer: JsonAnswer): void {
    this.status.textContent =
      answer.status === 401
        ? 'This sqlgate asks for a statistics token (STATS_TOKEN): enter it above.'
        : `Statistics failed (HTTP ${answer.status}): ${String(answer.body.error ?? '')}`;
  }

  private showPools(pools: PoolStat[]): void {
    this.pools.replaceChildren(
      ...(pools.length === 0
        ? [h('tr', {}, [h('td', { text: 'No pool yet', attrs: { colspan: '5' } })])]
        : pools.map((pool) =>
            h('tr', {}, [
              h('td', { text: pool.poolId }),
              ...[
                pool.totalConnections,
                pool.idleConnections,
                pool.activeConnections,
                pool.waitingClients,
              ].map((value) => h('td', { className: 'number', text: String(value) })),
            ]),
          )),
    );
  }

  private showCache(answer: CacheAnswer): void {
    const stats = answer.stats ?? {};
    const figures: [string, string][] = [
      ['Statements', String(stats.totalQueries ?? 0)],
      ['Hits', String(stats.cacheHits ?? 0)],
      ['Misses', String(stats.cacheMisses ?? 0)],
      ['Hit rate', `${(stats.hitRate ?? 0).toFixed(1)} %`],
      ['Mean time', `${(stats.avgExecutionTime ?? 0).toFixed(2)} ms`],
      ['Entries', String(stats.cacheSize ?? 0)],
    ];
    this.cacheFigures.replaceChildren(
      ...figures.map(([name, value]) =>
        h('div', { className: 'figure' }, [
          h('dt', { text: name }),
          h('dd', { text: value, attrs: { 'data-figure': name } }),
        ]),
      ),
    );
    this.entries.replaceChildren(
      ...(answer.entries ?? []).map((entry) =>
        h('tr', {}, [
          h('td', { className: 'sql', text: entry.query }),
          h('td', { className: 'number', text: entry.executionTime.toFixed(2) }),
          h('td', { className: 'number', text: String(entry.hits) }),
          h('td', { text: new Date(entry.timestamp).toLocaleTimeString() }),
        ]),
      ),
    );
    const now = Date.now();
    this.samples = addSample(this.samples, {
      at: now,
      totalQueries: stats.totalQueries ?? 0,
      hitRate: stats.hitRate ?? 0,
    });
    this.drawChart(now);
  }

  private drawChart(now: number): void {
    const counts = queriesPerInterval(this.samples);
    const most = counts.reduce((max, { count }) => Math.max(max, count), 0);
    const span = chartSpan(this.samples, now);
    this.hitRateLine.setAttribute(
      'points',
      polylinePoints(
        this.samples.map(({ at, hitRate }) => ({ at, value: hitRate })),
        now,
        span,
        100,
        CHART_WIDTH,
        CHART_HEIGHT,
      ),
    );
    this.queriesLine.setAttribute(
      'points',
      polylinePoints(
        counts.map(({ at, count }) => ({ at, value: count })),
        now,
        span,
        most,
        CHART_WIDTH,
        CHART_HEIGHT,
      ),
    );
    const minutes = Math.round(span / 60_000);
    this.chartScale.textContent = `last ${minutes} minute${minutes === 1 ? '' : 's'}; top of the chart: ${most} statements`;
  }
}

function table(headings: string[], body: HTMLElement, testId: string): HTMLElement {
  return h('div', { className: 'table-scroll' }, [
    h('table', { attrs: { 'data-testid': testId } }, [
      h('thead', {}, [
        h(
          'tr',
          {},
          headings.map((text) => h('th', { text, attrs: { scope: 'col' } })),
        ),
      ]),
      body,
    ]),
  ]);
}
