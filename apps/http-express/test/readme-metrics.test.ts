/** README's list of metrics is the registry's own (npm run docs:metrics writes it). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { metricListMarkdown } from '../src/observability/metric-list';

/** The cells of each table row, whitespace and the separator row aside (prettier aligns them). */
function tableCells(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s-|]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

it('lists exactly the metrics GET /metrics serves', () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const section = /<!-- metrics:start -->([\s\S]*)<!-- metrics:end -->/.exec(readme)?.[1];
  expect(section).toBeDefined();
  const documented = tableCells(section ?? '');
  expect(documented.length).toBeGreaterThan(10);
  expect(documented).toEqual(tableCells(metricListMarkdown()));
});
