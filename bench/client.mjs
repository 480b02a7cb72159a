// What the Neon-compatible door and @sqlgate/client cost (npm run bench:client): in one run, on one
// throwaway PostgreSQL, with the `sqlgate` command at its default configuration,
//   - a 100-row read through @sqlgate/client's sqlgate() against the same read through pg directly
//     (a pg.Pool of 10), N concurrent loops in this process, queries per second;
//   - the same read as POST /sql (what the Neon driver sends) against POST /api/query, with
//     autocannon, requests per second and the server's CPU per request;
// rounds alternating which goes first, medians. Writes its section of docs/benchmarks.md.
import autocannon from 'autocannon';
import {
  connectClient,
  cpuSecondsOf,
  markdownTable,
  median,
  require,
  runMain,
  startDatabase,
  targetOf,
  writeSection,
} from './lib/harness.mjs';
import { startSqlgateCommand } from './lib/sqlgate-command.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SECONDS = Number(process.env.SECONDS ?? 4);
const LOOPS = 10;
const READ = 'SELECT id, name, score, created_at FROM bench_client ORDER BY id';
const START = '<!-- client:start -->';
const END = '<!-- client:end -->';

/** Runs `once` in LOOPS concurrent loops for SECONDS: completed calls per second. */
async function loops(once) {
  const until = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (performance.now() < until) {
        await once();
        done++;
      }
    }),
  );
  return done / SECONDS;
}

/** autocannon against one path with one body: 2xx per second and the server's CPU µs per one. */
async function cannon(server, path, body, headers) {
  const before = cpuSecondsOf(server.pid);
  const result = await autocannon({
    url: `${server.url}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    connections: LOOPS,
    duration: SECONDS,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx`);
  const cpu = cpuSecondsOf(server.pid) - before;
  return { perSecond: result['2xx'] / result.duration, cpuUs: (cpu * 1e6) / result['2xx'] };
}

await runMain(async () => {
  const database = await startDatabase();
  const setup = await connectClient(database);
  await setup.query(`DROP TABLE IF EXISTS bench_client;
    CREATE TABLE bench_client AS SELECT g AS id, 'name ' || g AS name, g * 1.5::float8 AS score,
      now() - g * interval '1 minute' AS created_at FROM generate_series(1, 100) g`);
  await setup.end();
  const target = targetOf(database);
  const connectionString =
    `postgresql://${encodeURIComponent(target.user)}:${encodeURIComponent(target.password ?? '')}` +
    `@${target.host}:${target.port}/${encodeURIComponent(target.database)}?sslmode=disable`;

  const server = await startSqlgateCommand({ env: { POOL_MAX: String(LOOPS) } });
  const pg = require('pg');
  const pool = new pg.Pool({ ...target, ssl: false, max: LOOPS });
  const { sqlgate } = await import('@sqlgate/client');
  const sql = sqlgate({ url: server.url, connectionString });

  const contenders = {
    'pg directly': () => loops(() => pool.query(READ)),
    '@sqlgate/client': () => loops(() => sql.query(READ)),
  };
  const doors = {
    'POST /api/query': () => cannon(server, '/api/query', { ...target, sql: READ }, {}),
    'POST /sql': () =>
      cannon(
        server,
        '/sql',
        { query: READ },
        {
          'Neon-Connection-String': connectionString,
          'Neon-Raw-Text-Output': 'true',
          'Neon-Array-Mode': 'true',
        },
      ),
  };
  // Warm-up: every path once, briefly.
  for (const run of [...Object.values(contenders), ...Object.values(doors)]) await run();
  const seen = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const group of [contenders, doors]) {
      const names = Object.keys(group);
      if (round % 2 === 1) names.reverse();
      for (const name of names) (seen[name] ??= []).push(await group[name]());
    }
  }
  await pool.end();

  const rate = (name) => median(seen[name].map((value) => value.perSecond ?? value));
  const cpu = (name) => median(seen[name].map((value) => value.cpuUs));
  const f = (value) => Math.round(value).toLocaleString('en-US');
  const section = [
    START,
    '## @sqlgate/client and POST /sql',
    '',
    `\`npm run bench:client\` (bench/client.mjs), measured ${new Date().toISOString().slice(0, 19)}Z: a 100-row, 4-column read (\`${READ}\`), the \`sqlgate\` command at its default configuration (POOL_MAX=${LOOPS}) on a throwaway local PostgreSQL without TLS; ${LOOPS} concurrent loops (or autocannon connections), ${ROUNDS} rounds of ${SECONDS} s alternating which goes first, medians.`,
    '',
    markdownTable(
      ['path', 'per second', 'ratio'],
      [
        ['pg directly (pg.Pool, 10 connections)', f(rate('pg directly')), '1.00×'],
        [
          "@sqlgate/client's `sql.query` through sqlgate",
          f(rate('@sqlgate/client')),
          `${(rate('@sqlgate/client') / rate('pg directly')).toFixed(2)}×`,
        ],
      ],
      ['l', 'r', 'r'],
    ),
    '',
    markdownTable(
      ['door', 'req/s', 'server CPU/req', 'ratio'],
      [
        ['POST /api/query', f(rate('POST /api/query')), `${f(cpu('POST /api/query'))} µs`, '1.00×'],
        [
          'POST /sql (values as text)',
          f(rate('POST /sql')),
          `${f(cpu('POST /sql'))} µs`,
          `${(rate('POST /sql') / rate('POST /api/query')).toFixed(2)}×`,
        ],
      ],
      ['l', 'r', 'r', 'r'],
    ),
    '',
    'The client, pg and the load generator share the machine with the server and PostgreSQL: the first table measures the whole round trip as an application sees it, HTTP and JSON included.',
    END,
  ].join('\n');
  console.log(section);
  await writeSection(section, (text) => {
    const start = text.indexOf(START);
    const end = text.indexOf(END, start);
    return start === -1 || end === -1 ? undefined : text.slice(start, end + END.length);
  });
});
