// Writes README's list of metrics (between <!-- metrics:start --> and <!-- metrics:end -->) from
// the registry that GET /metrics serves. npm run docs:metrics (builds first).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { metricListMarkdown } = require(
  path.join(repoRoot, 'apps/http-express/dist/observability/metric-list.js'),
);

const START = '<!-- metrics:start -->';
const END = '<!-- metrics:end -->';
const readme = path.join(repoRoot, 'README.md');
const text = fs.readFileSync(readme, 'utf8');
const from = text.indexOf(START);
const to = text.indexOf(END);
if (from === -1 || to < from) throw new Error(`README.md has no ${START} … ${END} section`);
const updated = `${text.slice(0, from + START.length)}\n${metricListMarkdown()}\n${text.slice(to)}`;
fs.writeFileSync(readme, updated);
