/**
 * The standalone server's V8 settings (docs/decisions.md 10.24): what keeps its memory flat while
 * it streams gigabytes, found by measuring where a stream's memory went.
 *
 * - The young generation does not grow while an answer or an upload streams. V8 grows it from
 *   2 MB to 32 MB as soon as objects survive a few collections, which a stream's rows in flight
 *   always do; a stream gains nothing from the room (it runs as fast or faster without), while a
 *   large JSON answer does (a quarter faster with it). So the growth factor, which V8 reads each
 *   time it would grow the space (the size flags count only at start), is 1 while any stream is
 *   open and V8's own otherwise. The space never shrinks on demand: a server that already grew it
 *   keeps it.
 * - PostgreSQL's parser (a WebAssembly module) compiled by the baseline compiler only. When its
 *   huge grammar function becomes hot, the optimising compiler takes 20-50 MB on background
 *   threads for a few seconds, whatever request runs then; the tree is read for one statement in
 *   ten and the results are memoised, so the parser's bench shows no difference in speed. This
 *   must be set before the parser is first loaded.
 *
 * They apply to the whole process, so the library never sets them: a host that embeds sqlgate
 * decides for its own process. Without `applyServerV8Settings()`, `streamOpened()` does nothing.
 */
import v8 from 'node:v8';

/** V8's default growth factor of the young generation. */
const DEFAULT_GROWTH_FACTOR = 2;

let applied = false;
let openStreams = 0;

export function applyServerV8Settings(): void {
  if (applied) return;
  applied = true;
  v8.setFlagsFromString('--liftoff-only');
}

/** A stream began; call the function it returns once it has ended (whole, cut or failed). */
export function streamOpened(): () => void {
  if (!applied) return () => undefined;
  if (openStreams++ === 0) v8.setFlagsFromString('--semi-space-growth-factor=1');
  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    if (--openStreams === 0) {
      v8.setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
    }
  };
}
