/**
 * The standalone server's V8 settings (docs/decisions.md 10.24): what keeps its memory flat while
 * it streams gigabytes, found by measuring where a stream's memory went.
 *
 * - A young generation capped at 8 MB (4 MB semi-spaces). V8 grows it to 32 MB as soon as objects
 *   survive a few collections, which a stream's rows in flight always do; at its initial 2 MB a
 *   large JSON answer costs a quarter of its speed in collections. V8 reads the growth factor each
 *   time it would grow the space (the size flags count only at start), so after each collection
 *   the factor is set to 1 once the space has reached the cap, and back to 2 below it. A burst of
 *   collections between two observations may grow it one step past the cap.
 * - PostgreSQL's parser (a WebAssembly module) compiled by the baseline compiler only. When its
 *   huge grammar function becomes hot, the optimising compiler takes 20-50 MB on background
 *   threads for a few seconds, whatever request runs then; the tree is read for one statement in
 *   ten and the results are memoised, so the parser's bench shows no difference in speed. This
 *   must be set before the parser is first loaded.
 *
 * They apply to the whole process, so the library never sets them: a host that embeds sqlgate
 * decides for its own process.
 */
import v8 from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';

/** Young generation (both semi-spaces) the server lets V8 grow to. */
export const YOUNG_GENERATION_CAP_BYTES = 8 * 1024 * 1024;

let applied = false;

export function applyServerV8Settings(): void {
  if (applied) return;
  applied = true;
  v8.setFlagsFromString('--liftoff-only');
  capYoungGeneration(YOUNG_GENERATION_CAP_BYTES);
}

function youngGenerationBytes(): number {
  const space = v8.getHeapSpaceStatistics().find(({ space_name }) => space_name === 'new_space');
  return space?.space_size ?? 0;
}

function capYoungGeneration(capBytes: number): void {
  let growing = true;
  const setGrowing = (grow: boolean): void => {
    if (grow === growing) return;
    growing = grow;
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
  };
  // One callback per batch of collections; it never keeps the process alive.
  new PerformanceObserver(() => setGrowing(youngGenerationBytes() < capBytes)).observe({
    entryTypes: ['gc'],
  });
}
