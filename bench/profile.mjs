// Where a server's CPU goes, per layer: runs one workload of bench/http.mjs against one server
// started under `node --cpu-prof`, then sums the profile's self time by layer (HTTP parsing, body
// read, validation, splitting, the pg protocol, JSON, logging, statistics…) and by function, in µs
// per request. Also writes the folded stacks (flamegraph.pl / speedscope input) and an SVG flame
// graph next to the .cpuprofile.
//
//   npm run bench:profile -- [workload] [server]        workload: select1 (default), rows100,
//                                                        reads3, write5, cached; server: sqlgate
//   PROFILE_SECONDS=10 PROFILE_CONNECTIONS=10            (default), fast, baseline, or a layer of
//                                                        bench/layers.mjs: adapter-canned,
//                                                        bare-canned, core-bare (sqlgate's body)
//   PROFILE_KIND=heap: bytes allocated per request by function instead of CPU time
//   PROFILE_KIND=survivors: only the bytes that outlived a young-generation collection
import fs from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import {
  connectClient,
  load,
  repoRoot,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
} from './lib/harness.mjs';
import { flameGraphSvg } from './lib/flame-graph.mjs';
import { prepareBenchTables, requestBody, WORKLOADS } from './lib/workloads.mjs';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
/** PROFILE_KIND=heap: where memory is allocated, in bytes per request, instead of CPU time. */
const HEAP = process.env.PROFILE_KIND === 'heap' || process.env.PROFILE_KIND === 'survivors';
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 10);
const [workloadId = 'select1', side = 'sqlgate'] = process.argv.slice(2);
const SCRIPTS = {
  sqlgate: 'sqlgate-server.mjs',
  fast: 'fast-server.mjs',
  baseline: 'baseline-server.mjs',
};
/** The layers of bench/layers.mjs, served by one script chosen by LAYER; they get sqlgate's body. */
const LAYER_SERVERS = ['bare-canned', 'adapter-canned', 'core-bare'];
for (const layer of LAYER_SERVERS) SCRIPTS[layer] = 'layer-server.mjs';
const bodySide = LAYER_SERVERS.includes(side) ? 'sqlgate' : side;

/**
 * The layer a frame belongs to, by its script and function. Order matters: the first match wins.
 * Node's own modules are named by what they do for a request.
 */
const LAYERS = [
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
  ['V8 / native (program)', (f) => f.functionName === '(program)'],
  ['pino (request log)', (f) => f.url.includes('/node_modules/pino')],
  [
    'prom-client / OpenTelemetry',
    (f) => /\/node_modules\/(prom-client|@opentelemetry)/.test(f.url),
  ],
  ['pg driver', (f) => /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//.test(f.url)],
  ['postgres.js', (f) => f.url.includes('/node_modules/postgres/')],
  [
    'express',
    (f) => /\/node_modules\/(express|router|body-parser|raw-body|finalhandler)/.test(f.url),
  ],
  ['other npm', (f) => f.url.includes('/node_modules/')],
  ['sqlgate: postgres adapter', (f) => f.url.includes('/packages/postgres-adapter/')],
  ['sqlgate: parser (split, classify)', (f) => f.url.includes('/packages/core/dist/parser/')],
  ['sqlgate: request validation', (f) => /\/packages\/core\/dist\/(schemas|request)/.test(f.url)],
  ['sqlgate: statistics', (f) => f.url.includes('/packages/core/dist/stats/')],
  ['sqlgate: result cache', (f) => f.url.includes('/packages/core/dist/cache/')],
  ['sqlgate: JSON', (f) => f.url.includes('/packages/core/dist/json/')],
  ['sqlgate: execution', (f) => f.url.includes('/packages/core/dist/')],
  ['sqlgate: observability', (f) => f.url.includes('/apps/http-express/dist/observability/')],
  ['sqlgate: HTTP adapter', (f) => f.url.includes('/apps/http-express/')],
  ['bench server script', (f) => f.url.includes('/bench/servers/')],
  ['node: HTTP parse and write', (f) => /node:(_http|internal\/http)/.test(f.url)],
  [
    'node: sockets and streams',
    (f) => /node:(net|internal\/stream|internal\/streams|stream)/.test(f.url),
  ],
  ['node: timers and promises', (f) => /node:internal\/(timers|process\/task_queues)/.test(f.url)],
  ['node: other', (f) => f.url.startsWith('node:')],
  ['JSON.stringify / JSON.parse', (f) => /^(stringify|parse)$/.test(f.functionName) && !f.url],
  ['V8 builtins and natives', () => true],
];

function layerOf(frame) {
  return LAYERS.find(([, test]) => test(frame))[0];
}

/** Self microseconds per node id, from the samples and their time deltas. */
function selfTimes(profile) {
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return self;
}

function shortUrl(url) {
  return url.replace(/^file:\/\//, '').replace(`${repoRoot}/`, '');
}

const frameName = (f) =>
  `${f.functionName || '(anonymous)'}${f.url ? ` ${shortUrl(f.url)}:${f.lineNumber + 1}` : ''}`;

/** Folded stacks: one line per stack, `root;child;leaf microseconds`. */
function foldedStacks(profile, self) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const lines = new Map();
  for (const [id, us] of self) {
    const names = [];
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at).callFrame;
      if (frame.functionName !== '(root)') names.push(frameName(frame).replaceAll(';', ','));
    }
    const key = names.reverse().join(';');
    lines.set(key, (lines.get(key) ?? 0) + us);
  }
  return [...lines].filter(([key]) => !key.startsWith('(idle)')).map(([k, us]) => `${k} ${us}`);
}

/** Time per function including its callees (each sample counted once per function on its stack). */
function inclusiveTimes(profile, self) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const totals = new Map();
  for (const [id, us] of self) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const name = frameName(byId.get(at).callFrame);
      if (seen.has(name)) continue;
      seen.add(name);
      totals.set(name, (totals.get(name) ?? 0) + us);
    }
  }
  return totals;
}

function summarize(profile, requests) {
  const self = selfTimes(profile);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const layers = new Map();
  const functions = new Map();
  for (const [id, us] of self) {
    const frame = byId.get(id).callFrame;
    const layer = layerOf(frame);
    layers.set(layer, (layers.get(layer) ?? 0) + us);
    if (layer === 'idle') continue;
    const name = frameName(frame);
    functions.set(name, { layer, us: (functions.get(name)?.us ?? 0) + us });
  }
  const busy = [...layers].filter(([l]) => l !== 'idle').reduce((sum, [, us]) => sum + us, 0);
  const inclusive = inclusiveTimes(profile, self);
  return { self, layers, functions, inclusive, busy, perRequest: (us) => us / requests };
}

const pad = (text, width) => String(text).padEnd(width);
const num = (n, width = 8) => n.toFixed(1).padStart(width);

await runMain(async () => {
  const workload = WORKLOADS.find((w) => w.id === workloadId);
  if (!workload || !SCRIPTS[side] || !workload[bodySide]) {
    throw new Error(
      `usage: bench/profile.mjs [${WORKLOADS.map((w) => w.id).join('|')}] [${Object.keys(SCRIPTS).join('|')}]`,
    );
  }
  const database = await startDatabase();
  const client = await connectClient(database);
  await prepareBenchTables(client);
  await client.end();

  const directory = path.join(repoRoot, 'bench', 'profiles');
  fs.mkdirSync(directory, { recursive: true });
  const name = `${workloadId}-${side}-c${CONNECTIONS}${HEAP ? '-heap' : ''}`;
  for (const old of fs.readdirSync(directory).filter((f) => f.startsWith(`${name}.`))) {
    fs.rmSync(path.join(directory, old));
  }
  const file = path.join(directory, `${name}.${HEAP ? 'heapprofile' : 'cpuprofile'}`);
  const server = await startServerProcess(SCRIPTS[side], {
    name: side,
    nodeArgs: ['--import', path.join(repoRoot, 'bench', 'lib', 'profile-on-signal.mjs')],
    env: {
      PROFILE_FILE: file,
      PROFILE_KIND: process.env.PROFILE_KIND ?? 'cpu',
      ...(LAYER_SERVERS.includes(side) ? { LAYER: side } : {}),
    },
  });
  const body = requestBody(workload, bodySide, targetOf(database));
  await load(server, body, CONNECTIONS, 3); // warm-up: JIT and pools, not profiled
  process.kill(server.pid, 'SIGUSR2');
  await delay(300);
  const measured = await load(server, body, CONNECTIONS, SECONDS);
  process.kill(server.pid, 'SIGUSR2');
  while (!fs.existsSync(file)) await delay(100);
  await server.stop();
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const requests = measured.ok + measured.bad;
  if (HEAP) {
    printAllocations(profile, requests, measured);
    return;
  }
  const summary = summarize(profile, requests);

  fs.writeFileSync(
    path.join(directory, `${name}.folded`),
    `${foldedStacks(profile, summary.self).join('\n')}\n`,
  );
  fs.writeFileSync(
    path.join(directory, `${name}.svg`),
    flameGraphSvg(
      foldedStacks(profile, summary.self),
      `${workload.label}, ${side}, ${CONNECTIONS} connections`,
    ),
  );

  console.log(
    `${workload.label} on ${side}, ${CONNECTIONS} connections: ${Math.round(measured.reqPerSec)} req/s, ` +
      `${measured.cpuUsPerReq.toFixed(0)} µs CPU/req (from /proc); profile: ${file}`,
  );
  console.log(`\nself time by layer (µs per request, ${requests} requests profiled)\n`);
  for (const [layer, us] of [...summary.layers].sort((a, b) => b[1] - a[1])) {
    if (layer === 'idle') continue;
    console.log(
      `${pad(layer, 40)} ${num(summary.perRequest(us))} µs  ${num((100 * us) / summary.busy, 5)} %`,
    );
  }
  console.log(`\ntop functions by self time\n`);
  const top = [...summary.functions].sort((a, b) => b[1].us - a[1].us).slice(0, 40);
  for (const [fn, { layer, us }] of top) {
    console.log(`${num(summary.perRequest(us), 7)} µs  ${pad(layer.slice(0, 28), 29)} ${fn}`);
  }
  console.log(`\nsqlgate functions by time including callees\n`);
  const own = [...summary.inclusive].filter(([fn]) => /packages\/|apps\//.test(fn));
  for (const [fn, us] of own.sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    console.log(`${num(summary.perRequest(us), 7)} µs  ${fn}`);
  }
});

/** Bytes allocated per request by each function (a sampling heap profile, garbage included). */
function printAllocations(profile, requests, measured) {
  const bySite = new Map();
  const visit = (node) => {
    if (node.selfSize) {
      const name = frameName(node.callFrame);
      bySite.set(name, (bySite.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) visit(child);
  };
  visit(profile.head);
  const total = [...bySite.values()].reduce((sum, bytes) => sum + bytes, 0);
  console.log(
    `${Math.round(measured.reqPerSec)} req/s; ${Math.round(total / requests)} bytes allocated per request (sampled)\n`,
  );
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 50)) {
    console.log(`${String(Math.round(bytes / requests)).padStart(7)} B  ${site}`);
  }
}
