// Preloaded into a bench server (`node --import`) by bench/profile.mjs: the first SIGUSR2 starts
// V8's CPU profiler (or, with PROFILE_KIND=heap, its sampling heap profiler: where memory is
// allocated), the second stops it and writes the profile to PROFILE_FILE, so the profile covers the
// measured run only (not start-up, compilation or the warm-up).
import fs from 'node:fs';
import { Session } from 'node:inspector';
import process from 'node:process';

const session = new Session();
session.connect();
const post = (method, params = {}) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );

// `survivors`: only what outlived a young-generation collection (what the scavenger copies and
// promotes, which costs far more than what dies young).
const survivors = process.env.PROFILE_KIND === 'survivors';
const heap = process.env.PROFILE_KIND === 'heap' || survivors;
const start = heap
  ? () =>
      post('HeapProfiler.enable').then(() =>
        post('HeapProfiler.startSampling', {
          samplingInterval: 256,
          // Garbage too: what a request allocates and drops is what costs scavenges.
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: !survivors,
        }),
      )
  : () =>
      post('Profiler.enable')
        .then(() => post('Profiler.setSamplingInterval', { interval: 100 }))
        .then(() => post('Profiler.start'));
const stop = heap ? () => post('HeapProfiler.stopSampling') : () => post('Profiler.stop');

let running = false;
process.on('SIGUSR2', () => {
  if (!running) {
    running = true;
    start().catch((error) => console.error(`profiler did not start: ${error.message}`));
    return;
  }
  running = false;
  stop()
    .then(({ profile }) => {
      const file = process.env.PROFILE_FILE;
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(profile));
      fs.renameSync(`${file}.tmp`, file);
    })
    .catch((error) => console.error(`profiler did not stop: ${error.message}`));
});
