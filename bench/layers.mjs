// Where a SELECT 1 through sqlgate's standalone server goes, by layer: five servers side by side
// on the same request, each in its own process, rounds alternating; medians of req/s and of the
// server's CPU per request (user and system apart). Writes its section of docs/benchmarks.md.
//
//   bare node:http, canned answer     what Node's HTTP costs with nothing else (the floor)
//   HTTP adapter, canned answer       sqlgate's server around an answer given at once
//   core behind bare node:http        sqlgate's query service with a hand-written handler
//   sqlgate                           the standalone server (bench/servers/sqlgate-server.mjs)
//   fast peer                         node:http + postgres.js (bench/servers/fast-server.mjs)
//
// The canned answer is the service's own answer to the request, computed once: the layers above
// it run in full, no PostgreSQL round trip happens (bench/servers/layer-server.mjs).
//
//   npm run bench:layers                       LAYERS_ROUNDS=3 LAYERS_SECONDS=5 LAYERS_CONNECTIONS=10
import {
  connectClient,
  LAYERS_END,
  LAYERS_START,
  layersSectionOf,
  load,
  machineFacts,
  machineLines,
  markdownTable,
  median,
  postJson,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
  writeSection,
} from './lib/harness.mjs';

const ROUNDS = Number(process.env.LAYERS_ROUNDS ?? 3);
const SECONDS = Number(process.env.LAYERS_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.LAYERS_CONNECTIONS ?? 10);
const SQL = 'SELECT 1 AS one';

const LAYERS = [
  { id: 'bare-canned', label: 'bare node:http, canned answer', script: 'layer-server.mjs' },
  { id: 'adapter-canned', label: 'HTTP adapter, canned answer', script: 'layer-server.mjs' },
  { id: 'core-bare', label: 'core behind bare node:http', script: 'layer-server.mjs' },
  { id: 'sqlgate', label: 'sqlgate (standalone server)', script: 'sqlgate-server.mjs' },
  { id: 'fast', label: 'fast peer (node:http + postgres.js)', script: 'fast-server.mjs' },
];

await runMain(async () => {
  const database = await startDatabase();
  const client = await connectClient(database);
  const facts = await machineFacts(client);
  await client.end();
  const body = { sql: SQL, ...targetOf(database) };
  const servers = new Map();
  for (const layer of LAYERS) {
    const server = await startServerProcess(layer.script, {
      name: layer.id,
      env: { LAYER: layer.id },
    });
    const probe = await postJson(`${server.url}/api/query`, body);
    if (probe.status !== 200 || probe.json?.rows?.[0]?.one !== 1) {
      throw new Error(`${layer.id} answered ${probe.status} ${JSON.stringify(probe.json)}`);
    }
    await load(server, body, CONNECTIONS, 1);
    servers.set(layer.id, server);
  }
  const runs = new Map(LAYERS.map((layer) => [layer.id, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...LAYERS].reverse() : LAYERS;
    for (const layer of order) {
      const run = await load(servers.get(layer.id), body, CONNECTIONS, SECONDS);
      if (run.bad > 0) throw new Error(`${layer.id}: ${run.bad} failed requests`);
      runs.get(layer.id).push(run);
      console.log(
        `${layer.id.padEnd(15)} ${Math.round(run.reqPerSec)} req/s  ${Math.round(run.userCpuUsPerReq)} µs user  ${Math.round(run.cpuUsPerReq - run.userCpuUsPerReq)} µs system`,
      );
    }
  }
  const of = (id, key) => median(runs.get(id).map((run) => run[key]));
  const fastReqPerSec = of('fast', 'reqPerSec');
  const rows = LAYERS.map(({ id, label }) => {
    const user = of(id, 'userCpuUsPerReq');
    const total = of(id, 'cpuUsPerReq');
    return [
      label,
      Math.round(of(id, 'reqPerSec')).toLocaleString('en-US'),
      `${(of(id, 'reqPerSec') / fastReqPerSec).toFixed(2)}×`,
      `${Math.round(user)} µs`,
      `${Math.round(total - user)} µs`,
      `${Math.round(total)} µs`,
    ];
  });
  const section = [
    LAYERS_START,
    '',
    '## SELECT 1 by layer',
    '',
    `\`npm run bench:layers\` (bench/layers.mjs), measured ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}: \`${SQL}\` at ${CONNECTIONS} connections on five servers, each in its own process, ${ROUNDS} rounds of ${SECONDS} s runs alternating the order, after a 1 s warm-up each; medians. A canned answer is the service's own answer to the request, computed once and then given at once: the layers above it run in full, and no PostgreSQL round trip happens. CPU is the server process's, per response, user and system apart. The first three rows each add one part: the adapter, then the core instead of it; the whole server is both, and what it costs beyond the sum of the parts is what they cost together.`,
    '',
    ...machineLines(facts),
    '',
    markdownTable(
      ['server', 'req/s', 'vs fast peer', 'user CPU/req', 'system CPU/req', 'CPU/req'],
      rows,
      ['l', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    LAYERS_END,
  ].join('\n');
  await writeSection(section, layersSectionOf);
  console.log('wrote docs/benchmarks.md');
});
