/**
 * The standalone server's V8 settings (docs/decisions.md 10.24): what keeps its memory flat while
 * it streams gigabytes, found by measuring where a stream's memory went.
 *
 * - A young generation that stays at its initial size. V8 grows it (to 32 MB and more) as soon as
 *   objects survive a few collections, and a stream always has some in flight: rows on their way
 *   to the client. At its initial size a stream runs in 40 MB less memory and no slower
 *   (docs/benchmarks.md). The growth factor is read each time V8 would grow the space, so setting
 *   it while the process runs takes effect, unlike the size flags.
 * - PostgreSQL's parser (a WebAssembly module) compiled by the baseline compiler only. When its
 *   huge grammar function becomes hot, the optimising compiler takes 20-50 MB on background
 *   threads for a few seconds, whatever request runs then; the tree is read for one statement in
 *   ten and the results are memoised, so the parser's bench shows no difference in speed. This
 *   must be set before the parser is first loaded.
 *
 * They apply to the whole process, so the library never sets them: a host that embeds sqlgate
 * decides for its own process (the same flags on its command line do the same).
 */
import v8 from 'node:v8';

export const SERVER_V8_FLAGS = ['--semi-space-growth-factor=1', '--liftoff-only'] as const;

export function applyServerV8Settings(): void {
  for (const flag of SERVER_V8_FLAGS) v8.setFlagsFromString(flag);
}
