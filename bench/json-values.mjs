// json-heavy results before and after docs/decisions.md 10.13 (json spliced as PostgreSQL's text).
// npm run build && node bench/json-values.mjs
// Runs SELECTs through the query service in this process, each followed by the response
// serialisation the HTTP app does, and reports the median time of each path:
//   parsed   json values JSON.parse'd by the adapter, the response written with JSON.stringify
//            (how sqlgate answered before; today's library default);
//   raw      json values kept as RawJson, the response written with serializeResponse (HTTP app).
// BEFORE_ADAPTER=<dir>/dist/index.js adds the adapter of an older build as a third path.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import {
  machineFacts,
  machineLines,
  median,
  requireBuilt,
  runMain,
  startDatabase,
  connectClient,
  require,
  textTable,
  targetOf,
} from './lib/harness.mjs';

const RUNS = Number(process.env.RUNS ?? 15);
const WARM_UP = 3;

const WORKLOADS = [
  {
    label: '10,000 rows, one jsonb column (~200 B each)',
    sql: `SELECT jsonb_build_object('id', g, 'name', md5(g::text), 'price', (g::numeric / 7)::numeric(12,4),
      'tags', jsonb_build_array('a', 'b', g % 10), 'nested', jsonb_build_object('ok', g % 2 = 0, 'n', NULL)) AS doc
      FROM generate_series(1, 10000) g`,
  },
  {
    label: '10,000 rows, one json column (~200 B each)',
    sql: `SELECT json_build_object('id', g, 'name', md5(g::text), 'price', (g::numeric / 7)::numeric(12,4),
      'tags', json_build_array('a', 'b', g % 10), 'nested', json_build_object('ok', g % 2 = 0, 'n', NULL)) AS doc
      FROM generate_series(1, 10000) g`,
  },
  {
    label: '10,000 rows, one jsonb column (~2 KB each)',
    // Built once, sent 10,000 times: the time goes to reading and writing it, not to building it.
    sql: `WITH d AS MATERIALIZED (SELECT jsonb_agg(jsonb_build_object('i', i, 'v', i * 1.5, 's', md5(i::text), 'b', i % 2 = 0)) AS doc
      FROM generate_series(1, 20) i) SELECT doc FROM d, generate_series(1, 10000)`,
  },
  {
    label: '10,000 rows, 4 jsonb columns (small)',
    sql: `SELECT to_jsonb(g) a, to_jsonb(md5(g::text)) b, jsonb_build_array(g, g) c, '{"k": 1.10}'::jsonb d
      FROM generate_series(1, 10000) g`,
  },
  {
    label: '10,000 rows, no json (int, text, float8)',
    sql: 'SELECT g, md5(g::text) AS t, g / 3.0::float8 AS f FROM generate_series(1, 10000) g',
  },
];

function bodyFor(database, sql) {
  return { ...targetOf(database), sql };
}

/** One request through `path`: total and serialisation milliseconds, and the response bytes. */
async function once(path, body) {
  const started = performance.now();
  const { body: answer, failure } = await path.service.execute(body);
  if (failure) throw new Error(JSON.stringify(answer));
  const serialising = performance.now();
  // Buffer.byteLength as writeJson does: it also flattens a concatenated string.
  const bytes = Buffer.byteLength(path.serialize(answer));
  const done = performance.now();
  return { total: done - started, serialisation: done - serialising, bytes };
}

/** The paths in alternation, so that load from elsewhere on the machine hits them alike. */
async function measure(paths, body) {
  const samples = new Map(paths.map((path) => [path.name, []]));
  for (let run = 0; run < WARM_UP + RUNS; run++) {
    const order = run % 2 === 0 ? paths : [...paths].reverse();
    for (const path of order) {
      const sample = await once(path, body);
      if (run >= WARM_UP) samples.get(path.name).push(sample);
    }
  }
  const results = {};
  for (const [name, list] of samples) {
    results[name] = {
      total: median(list.map((s) => s.total)),
      serialisation: median(list.map((s) => s.serialisation)),
      bytes: list[0].bytes,
    };
  }
  return results;
}

await runMain(async () => {
  const core = requireBuilt('packages/core');
  const adapter = requireBuilt('packages/postgres-adapter');
  const database = await startDatabase();
  const client = await connectClient(database);
  const facts = await machineFacts(client);
  await client.end();

  const paths = [
    {
      name: 'parsed',
      connections: () => adapter.createPostgresConnections({ rawJson: false }),
      serialize: JSON.stringify,
    },
    {
      name: 'raw',
      connections: () => adapter.createPostgresConnections({ rawJson: true }),
      serialize: core.serializeResponse,
    },
  ];
  if (process.env.BEFORE_ADAPTER) {
    const before = require(process.env.BEFORE_ADAPTER);
    paths.unshift({
      name: 'before',
      connections: () => before.createPostgresConnections({}),
      serialize: JSON.stringify,
    });
  }

  for (const path of paths)
    path.service = core.createQueryService({ connections: path.connections() });
  const rows = [];
  try {
    for (const workload of WORKLOADS) {
      const results = await measure(paths, bodyFor(database, workload.sql));
      const baseline = results[paths[0].name];
      for (const path of paths) {
        const result = results[path.name];
        rows.push([
          workload.label,
          path.name,
          result.total.toFixed(1),
          result.serialisation.toFixed(1),
          (result.bytes / 1024).toFixed(0),
          `${(baseline.total / result.total).toFixed(2)}x`,
        ]);
      }
    }
  } finally {
    for (const path of paths) await path.service.close();
  }
  console.log(machineLines(facts).join('\n'));
  console.log(
    `median of ${RUNS} runs after ${WARM_UP} warm-up runs; speed-up relative to ${paths[0].name}\n`,
  );
  console.log(
    textTable(['workload', 'path', 'total ms', 'serialise ms', 'KiB', 'speed-up'], rows, [
      'l',
      'l',
      'r',
      'r',
      'r',
      'r',
    ]),
  );
});
