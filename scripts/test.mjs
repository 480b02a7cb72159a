// `npm test`: every stage runs even when an earlier one failed, so that one run reports every
// failure (docs/decisions.md 10.45). Prints how long each stage took and exits non-zero when any
// failed. Run one test file with `npx jest <path>` instead.
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BROWSER_TESTS = [
  'apps/http-express/test/console-browser.test.ts',
  'apps/http-express/test/client-browser.test.ts',
  'apps/http-express/test/console-keys-browser.test.ts',
  'apps/http-express/test/console-schema-browser.test.ts',
  'apps/http-express/test/console-workbench-browser.test.ts',
];

const STAGES = [
  { name: 'build', command: 'npm', args: ['run', 'build'] },
  {
    name: 'jest (every project but the browser tests)',
    command: 'npx',
    args: [
      'jest',
      ...BROWSER_TESTS.map((test) => `--testPathIgnorePatterns=${path.basename(test)}`),
    ],
  },
  // On their own, after the others: Chromium does not compete for the CPU with them.
  { name: 'jest (browser tests)', command: 'npx', args: ['jest', ...BROWSER_TESTS] },
  { name: 'corpus check', command: 'node', args: ['scripts/corpus.mjs'] },
];

function runStage({ name, command, args }) {
  console.log(`\n=== ${name}: ${[command, ...args].join(' ')}`);
  const started = performance.now();
  const result = spawnSync(command, args, {
    cwd: repoRoot,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  const seconds = (performance.now() - started) / 1000;
  const failure = result.error
    ? `could not start: ${result.error.message}`
    : result.status !== 0
      ? `exit ${result.status ?? result.signal}`
      : undefined;
  console.log(
    `=== ${name}: ${failure ? `FAILED (${failure})` : 'passed'} in ${seconds.toFixed(1)} s`,
  );
  return { name, seconds, failure };
}

const results = STAGES.map(runStage);

console.log('\nnpm test summary:');
for (const { name, seconds, failure } of results) {
  console.log(`  ${failure ? 'FAILED' : 'passed'}  ${seconds.toFixed(1).padStart(7)} s  ${name}`);
}
const total = results.reduce((sum, { seconds }) => sum + seconds, 0);
const failed = results.filter(({ failure }) => failure);
console.log(`  total   ${total.toFixed(1).padStart(7)} s`);
if (failed.length > 0) {
  console.log(
    `\n${failed.length} of ${results.length} stages failed: ${failed.map(({ name }) => name).join(', ')}`,
  );
  process.exit(1);
}
