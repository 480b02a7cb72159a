/**
 * Counters and histograms for the per-request path, read by prom-client's registry like its own
 * metrics (they implement what the registry calls: `name`, `help`, `type`, `get()`, `reset()`).
 * prom-client validates and hashes the labels on every count, even through a child, and that cost
 * more than everything else sqlgate's metrics do per request; here a label combination is looked
 * up once and counted by a plain field after that (`series`).
 */
type Labels = Record<string, string>;

interface SampleValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What prom-client's registry asks of a metric. */
interface RegistryMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly labelNames: readonly string[];
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    values: SampleValue[];
    aggregator: 'sum';
  }>;
  reset(): void;
}

abstract class SeriesMetric<Series> implements RegistryMetric {
  abstract readonly type: 'counter' | 'histogram';
  private readonly byKey = new Map<string, { labels: Labels; series: Series }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  /** The series of these label values (in `labelNames` order), made on first use. */
  series(...values: string[]): Series {
    const key = values.join('\u0000');
    let found = this.byKey.get(key);
    if (found === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((label, index) => (labels[label] = values[index] ?? ''));
      found = { labels, series: this.newSeries() };
      this.byKey.set(key, found);
    }
    return found.series;
  }

  async get() {
    const values: SampleValue[] = [];
    for (const { labels, series } of this.byKey.values())
      values.push(...this.samples(labels, series));
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: 'sum' as const,
    };
  }

  reset(): void {
    this.byKey.clear();
  }

  protected abstract newSeries(): Series;
  protected abstract samples(labels: Labels, series: Series): SampleValue[];
}

export interface CounterSeries {
  value: number;
}

export class SeriesCounter extends SeriesMetric<CounterSeries> {
  readonly type = 'counter';

  protected newSeries(): CounterSeries {
    return { value: 0 };
  }

  protected samples(labels: Labels, series: CounterSeries): SampleValue[] {
    return [{ labels, value: series.value }];
  }
}

export interface HistogramSeries {
  /** Observations per bucket (not cumulative), one more for +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class SeriesHistogram extends SeriesMetric<HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly upperBounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  /** Counts `value` in `series`. */
  observe(series: HistogramSeries, value: number): void {
    let bucket = 0;
    while (bucket < this.upperBounds.length && value > (this.upperBounds[bucket] as number)) {
      bucket++;
    }
    series.counts[bucket] = (series.counts[bucket] as number) + 1;
    series.sum += value;
    series.count += 1;
  }

  protected newSeries(): HistogramSeries {
    return { counts: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
  }

  protected samples(labels: Labels, series: HistogramSeries): SampleValue[] {
    const samples: SampleValue[] = [];
    let cumulative = 0;
    this.upperBounds.forEach((bound, index) => {
      cumulative += series.counts[index] as number;
      samples.push({
        labels: { le: String(bound), ...labels },
        value: cumulative,
        metricName: `${this.name}_bucket`,
      });
    });
    samples.push(
      { labels: { le: '+Inf', ...labels }, value: series.count, metricName: `${this.name}_bucket` },
      { labels, value: series.sum, metricName: `${this.name}_sum` },
      { labels, value: series.count, metricName: `${this.name}_count` },
    );
    return samples;
  }
}
