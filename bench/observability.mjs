// What metrics and the tracing API cost: SELECT 1 through two sqlgate processes, one with
// METRICS=on TRACING=on (the defaults; no OpenTelemetry SDK is registered, so spans are the API's
// no-ops) and one with both off, alternated in one run, with the CPU time per request. Part of
// npm run bench (after bench/http.mjs); writes the observability section of docs/benchmarks.md.
import {
  load,
  markdownTable,
  median,
  OBSERVABILITY_END,
  OBSERVABILITY_START,
  observabilitySectionOf,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
  textTable,
  writeSection,
} from './lib/harness.mjs';

const ROUNDS = Number(process.env.BENCH_RUNS ?? 15);
const DURATION_S = 4;
const WARMUP_S = 3;
const CONNECTIONS = 10;

/** A run of SELECT 1; a failed request makes the comparison meaningless. */
async function loadOk(server, body, duration) {
  const run = await load(server, body, CONNECTIONS, duration);
  if (run.bad > 0) throw new Error(`${server.name}: ${run.bad} failed requests`);
  return run;
}

await runMain(async () => {
  const database = await startDatabase();
  const body = { ...targetOf(database), sql: 'SELECT 1' };
  const [on, off] = await Promise.all([
    startServerProcess('sqlgate-server.mjs', {
      name: 'metrics and tracing on',
      env: { METRICS: 'on', TRACING: 'on' },
    }),
    startServerProcess('sqlgate-server.mjs', {
      name: 'metrics and tracing off',
      env: { METRICS: 'off', TRACING: 'off' },
    }),
  ]);
  const sides = [on, off];
  for (const server of sides) await loadOk(server, body, WARMUP_S);
  const runs = new Map(sides.map((server) => [server, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which side goes first, so neither always runs on a warmer machine.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const server of order) runs.get(server).push(await loadOk(server, body, DURATION_S));
  }
  const summary = sides.map((server) => ({
    name: server.name,
    reqPerSec: median(runs.get(server).map((run) => run.reqPerSec)),
    cpuUsPerReq: median(runs.get(server).map((run) => run.cpuUsPerReq)),
  }));
  const [withThem, without] = summary;
  const ratio = withThem.reqPerSec / without.reqPerSec;
  const header = ['sqlgate', 'SELECT 1 req/s (median)', 'CPU µs/req (median)', 'vs off'];
  const rows = summary.map((side) => [
    side.name,
    side.reqPerSec.toLocaleString('en-US', { maximumFractionDigits: 0 }),
    side.cpuUsPerReq.toFixed(1),
    `${(side.reqPerSec / without.reqPerSec).toFixed(3)}×`,
  ]);
  console.log(textTable(header, rows, ['l', 'r', 'r', 'r']));
  const verdict = ratio >= 0.95 ? 'PASS' : 'FAIL';
  const cost =
    ratio >= 1
      ? `no cost measured (${((ratio - 1) * 100).toFixed(1)} % more req/s with them on: run-to-run noise)`
      : `${((1 - ratio) * 100).toFixed(1)} % fewer req/s with them on`;
  console.log(`${verdict}: metrics and tracing: ${cost} (target < 5 % fewer)`);
  const section = [
    OBSERVABILITY_START,
    '## Observability',
    '',
    `\`npm run bench\` (bench/observability.mjs): \`SELECT 1\` at ${CONNECTIONS} connections through two sqlgate processes, one with \`METRICS=on TRACING=on\` (the defaults; no OpenTelemetry SDK registered, so the tracing API's no-ops run) and one with both off; a ${WARMUP_S} s warm-up each, then ${ROUNDS} rounds of ${DURATION_S} s runs alternating the two (the first side alternates too); medians.`,
    '',
    markdownTable(header, rows, ['l', 'r', 'r', 'r']),
    '',
    `**${verdict}: metrics and tracing: ${cost} (target < 5 % fewer).**`,
    OBSERVABILITY_END,
  ].join('\n');
  await writeSection(section, observabilitySectionOf);
});
