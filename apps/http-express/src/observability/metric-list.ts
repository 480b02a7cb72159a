/**
 * README's list of metrics, made from the registry itself so that it cannot drift from what
 * GET /metrics serves (`npm run docs:metrics` writes it; a test compares).
 */
import type { QueryService } from '@sqlgate/core';
import { ServiceMetrics } from './metrics';

/** Enough of a service for the registry to be built; it is never scraped. */
const IDLE_SERVICE = {
  poolStats: () => [],
  cacheUsage: async () => ({ entries: 0, bytes: 0, evictions: 0 }),
  sessionStatistics: () => ({ open: 0, opened: 0, ended: {} }),
} as unknown as QueryService;

/** A Markdown table of sqlgate's own metrics: name, type, labels, meaning. */
export function metricListMarkdown(): string {
  const { registry } = new ServiceMetrics(IDLE_SERVICE);
  const rows = registry
    .getMetricsAsArray()
    .filter((metric) => metric.name.startsWith('sqlgate_'))
    .map((metric) => {
      const {
        name,
        help,
        labelNames = [],
      } = metric as unknown as {
        name: string;
        help: string;
        labelNames?: string[];
      };
      const type = (metric as unknown as { type?: string }).type ?? metric.constructor.name;
      const labels = labelNames.map((label) => `\`${label}\``).join(', ') || '–';
      return `| \`${name}\` | ${String(type).toLowerCase()} | ${labels} | ${help} |`;
    });
  return [
    '| metric | type | labels | meaning |',
    '| ------ | ---- | ------ | ------- |',
    ...rows,
  ].join('\n');
}
