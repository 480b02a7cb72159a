/**
 * The standalone server's V8 settings (docs/decisions.md 10.24) rely on V8 reading the young
 * generation's growth factor while the process runs. This holds that claim against the Node.js in
 * use: a process that keeps objects alive across many collections grows its young generation to
 * 32 MB with V8's defaults; with the settings applied it does not grow while a stream is open,
 * and grows again once none is.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const SETTINGS_MODULE = path.join(__dirname, '..', 'dist', 'server-v8-settings.js');

/**
 * Allocates in steps, as a server does between events, keeping a sliding window of objects alive,
 * first with a stream open, then with none; prints the largest young generation seen in each.
 */
const ALLOCATING_PROGRAM = `
  const v8 = require('node:v8');
  const settings = require(${JSON.stringify(SETTINGS_MODULE)});
  if (process.argv[1] === 'apply') settings.applyServerV8Settings();
  const newSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
  const initial = newSpace();
  const window = new Array(20_000);
  function allocate(count) {
    let largest = 0;
    for (let i = 0; i < count; i++) {
      window[i % window.length] = { row: [i, 'value ' + i] };
      if (i % 10_000 === 0) largest = Math.max(largest, newSpace());
    }
    return largest;
  }
  const closeStream = settings.streamOpened();
  const whileStreaming = allocate(3_000_000);
  closeStream();
  const afterwards = allocate(3_000_000);
  process.stdout.write(JSON.stringify({ initial, whileStreaming, afterwards }));
`;

function youngGeneration(mode: 'apply' | 'defaults') {
  const output = execFileSync(process.execPath, ['-e', ALLOCATING_PROGRAM, mode], {
    encoding: 'utf8',
  });
  return JSON.parse(output) as { initial: number; whileStreaming: number; afterwards: number };
}

describe('the standalone server V8 settings', () => {
  it('keep the young generation from growing while a stream is open, and only then', () => {
    // With both semi-spaces in use, the space's size is twice its initial one.
    const defaults = youngGeneration('defaults');
    expect(defaults.whileStreaming).toBeGreaterThan(defaults.initial * 4);

    const applied = youngGeneration('apply');
    expect(applied.whileStreaming).toBeLessThanOrEqual(applied.initial * 2);
    expect(applied.afterwards).toBeGreaterThan(applied.initial * 4);
  });
});
