/**
 * The standalone server's V8 settings (docs/decisions.md 10.24) rely on V8 reading the young
 * generation's growth factor while the process runs. This holds that claim against the Node.js in
 * use: a process that keeps objects alive across many collections grows its young generation
 * to 32 MB with Node's defaults, and no further than the cap with the settings applied.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { YOUNG_GENERATION_CAP_BYTES } from '../src/server-v8-settings';

const SETTINGS_MODULE = path.join(__dirname, '..', 'dist', 'server-v8-settings.js');

/**
 * Allocates in steps, as a server does between events, keeping a sliding window of objects alive;
 * prints the largest young generation seen.
 */
const ALLOCATING_PROGRAM = `
  const v8 = require('node:v8');
  if (process.argv[1] === 'apply') require(${JSON.stringify(SETTINGS_MODULE)}).applyServerV8Settings();
  const newSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
  const initial = newSpace();
  let largest = initial;
  const window = new Array(20_000);
  let i = 0;
  (function step() {
    for (const end = i + 10_000; i < end; i++) window[i % window.length] = { row: [i, 'value ' + i] };
    largest = Math.max(largest, newSpace());
    if (i < 3_000_000) setImmediate(step);
    else process.stdout.write(JSON.stringify({ initial, largest }));
  })();
`;

function newSpaceSizes(mode: 'apply' | 'defaults'): { initial: number; largest: number } {
  const output = execFileSync(process.execPath, ['-e', ALLOCATING_PROGRAM, mode], {
    encoding: 'utf8',
  });
  return JSON.parse(output) as { initial: number; largest: number };
}

describe('the standalone server V8 settings', () => {
  it('cap the young generation where the defaults let it grow', () => {
    const defaults = newSpaceSizes('defaults');
    expect(defaults.largest).toBeGreaterThan(YOUNG_GENERATION_CAP_BYTES * 2);

    // A burst of collections between two observations may grow it one step past the cap.
    const applied = newSpaceSizes('apply');
    expect(applied.largest).toBeLessThanOrEqual(YOUNG_GENERATION_CAP_BYTES * 2);
  });
});
