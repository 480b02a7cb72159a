/**
 * The standalone server's V8 settings (docs/decisions.md 10.24) rely on V8 reading the young
 * generation's growth factor while the process runs. This holds that claim against the Node.js in
 * use: a process that keeps objects alive across many collections grows its young generation
 * with Node's defaults and does not with the settings applied.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const SETTINGS_MODULE = path.join(__dirname, '..', 'dist', 'server-v8-settings.js');

/** Allocates for a while, keeping a sliding window of objects alive; prints the largest new space seen. */
const ALLOCATING_PROGRAM = `
  const v8 = require('node:v8');
  if (process.argv[1] === 'apply') require(${JSON.stringify(SETTINGS_MODULE)}).applyServerV8Settings();
  const newSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
  const initial = newSpace();
  let largest = initial;
  const window = new Array(20_000);
  for (let i = 0; i < 3_000_000; i++) {
    window[i % window.length] = { row: [i, 'value ' + i] };
    if (i % 10_000 === 0) largest = Math.max(largest, newSpace());
  }
  process.stdout.write(JSON.stringify({ initial, largest }));
`;

function newSpaceSizes(mode: 'apply' | 'defaults'): { initial: number; largest: number } {
  const output = execFileSync(process.execPath, ['-e', ALLOCATING_PROGRAM, mode], {
    encoding: 'utf8',
  });
  return JSON.parse(output) as { initial: number; largest: number };
}

describe('the standalone server V8 settings', () => {
  it('keep the young generation at its initial size where the defaults let it grow', () => {
    // The space's size counts both semi-spaces once the second is in use: twice the initial one.
    const defaults = newSpaceSizes('defaults');
    expect(defaults.largest).toBeGreaterThan(defaults.initial * 4);

    const applied = newSpaceSizes('apply');
    expect(applied.largest).toBeLessThanOrEqual(applied.initial * 2);
  });
});
