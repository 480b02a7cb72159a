/**
 * Runs the comparison with pg in a Node process of its own with TZ set: Node reads TZ from the
 * real environment, and Jest gives a test a copy of process.env, so assigning TZ in a test does not
 * change the zone that Date uses for local time.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { buildSync } from 'esbuild';
import type { Difference, TypedText } from './pg-differences';

export interface ZoneRun {
  /** What Date says about the child's zone, to show TZ took effect. */
  offsetOnNewYear2024: number;
  differences: Difference[];
}

let childScript: string | undefined;

function script(): string {
  childScript ??= buildSync({
    stdin: {
      contents: `
        import { differencesFromPg } from './pg-differences';
        const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
        process.stdout.write(JSON.stringify({
          offsetOnNewYear2024: new Date(2024, 0, 1).getTimezoneOffset(),
          differences: differencesFromPg(cases),
        }));
      `,
      resolveDir: __dirname,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    external: ['pg-types'],
    write: false,
  }).outputFiles[0]?.text;
  if (childScript === undefined) throw new Error('esbuild produced no script');
  return childScript;
}

export function differencesInTimeZone(zone: string, cases: readonly TypedText[]): ZoneRun {
  const child = spawnSync(process.execPath, ['-e', script()], {
    input: JSON.stringify(cases),
    // pg-types is resolved from the repository's node_modules, as in the tests.
    cwd: path.join(__dirname, '..', '..'),
    env: { ...process.env, TZ: zone },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`comparison in ${zone} failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as ZoneRun;
}
