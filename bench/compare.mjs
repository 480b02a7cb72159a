// Two builds of sqlgate side by side: this checkout against another one (an earlier commit, built
// in its own directory), every workload of bench/http.mjs at 10 and 50 connections, rounds
// alternating which goes first; medians of req/s and of the server's CPU per request. Writes its
// section of docs/benchmarks.md.
//
//   git worktree add ../sqlgate-before <commit> && (cd ../sqlgate-before && npm ci && npm run build)
//   npm run bench:compare -- ../sqlgate-before          COMPARE_ROUNDS=3 COMPARE_SECONDS=4
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  COMPARE_END,
  COMPARE_START,
  compareSectionOf,
  connectClient,
  load,
  machineFacts,
  machineLines,
  markdownTable,
  median,
  repoRoot,
  runMain,
  startDatabase,
  startServerProcess,
  targetOf,
  writeSection,
} from './lib/harness.mjs';
import { prepareBenchTables, WORKLOADS } from './lib/workloads.mjs';

const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 3);
const SECONDS = Number(process.env.COMPARE_SECONDS ?? 4);
const CONNECTIONS = [10, 50];

const other = process.argv[2];
if (!other) throw new Error('usage: npm run bench:compare -- <path of another built checkout>');
const otherRoot = path.resolve(other);
const commitOf = (root) =>
  execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();

await runMain(async () => {
  const database = await startDatabase();
  const client = await connectClient(database);
  await prepareBenchTables(client);
  const facts = await machineFacts(client);
  await client.end();
  const sides = {
    before: await startServerProcess(
      path.relative(
        path.join(repoRoot, 'bench', 'servers'),
        path.join(otherRoot, 'bench', 'servers', 'sqlgate-server.mjs'),
      ),
      { name: 'before' },
    ),
    after: await startServerProcess('sqlgate-server.mjs', { name: 'after' }),
  };
  const rows = [];
  for (const workload of WORKLOADS) {
    for (const connections of CONNECTIONS) {
      const body = { ...workload.sqlgate, ...targetOf(database) };
      for (const side of Object.values(sides)) await load(side, body, connections, 1);
      const runs = { before: [], after: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of round % 2 ? ['after', 'before'] : ['before', 'after']) {
          runs[name].push(await load(sides[name], body, connections, SECONDS));
        }
      }
      const of = (name, key) => median(runs[name].map((run) => run[key]));
      const row = [
        workload.short ?? workload.label,
        String(connections),
        Math.round(of('before', 'reqPerSec')).toLocaleString('en-US'),
        Math.round(of('after', 'reqPerSec')).toLocaleString('en-US'),
        `${(of('after', 'reqPerSec') / of('before', 'reqPerSec')).toFixed(2)}×`,
        `${Math.round(of('before', 'cpuUsPerReq'))} µs`,
        `${Math.round(of('after', 'cpuUsPerReq'))} µs`,
        `${((of('after', 'cpuUsPerReq') / of('before', 'cpuUsPerReq') - 1) * 100).toFixed(0)} %`,
      ];
      rows.push(row);
      console.log(row.join('  '));
    }
  }
  const section = [
    COMPARE_START,
    '',
    '## Before and after, side by side',
    '',
    `\`npm run bench:compare\` (bench/compare.mjs), measured ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}: commit ${commitOf(otherRoot)} ("before") against ${commitOf(repoRoot)} ("after"), each the built server of bench/http.mjs in its own process on the same PostgreSQL; every workload of bench/http.mjs, ${ROUNDS} rounds of ${SECONDS} s runs alternating which goes first, after a 1 s warm-up each; medians. CPU is the server process's, per response.`,
    '',
    ...machineLines(facts),
    '',
    markdownTable(
      [
        'workload',
        'conns',
        'before req/s',
        'after req/s',
        'after/before',
        'before CPU/req',
        'after CPU/req',
        'CPU change',
      ],
      rows,
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    COMPARE_END,
  ].join('\n');
  await writeSection(section, compareSectionOf);
  console.log('wrote docs/benchmarks.md');
});
