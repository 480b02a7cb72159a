/**
 * GET /metrics of several workers as one exposition (docs/decisions.md 10.28), with prom-client's
 * own aggregation: each metric by its `aggregator` (sqlgate's counters, histograms and gauges are
 * summed; prom-client's process metrics choose their own: start time omitted, event loop lag
 * averaged, version taken from the first). Only the static `aggregate` is used: constructing an
 * AggregatorRegistry would add prom-client's own cluster messages to the channel.
 */
import { AggregatorRegistry } from 'prom-client';
import type { MetricJson } from './protocol';

export function aggregateMetrics(perWorker: readonly MetricJson[][]): Promise<string> {
  return AggregatorRegistry.aggregate(perWorker as MetricJson[][]).metrics();
}
