// Parser throughput: split+normalise (splitSql) and split+classify (parseSql) over PostgreSQL's
// regression SQL (../shared/corpus) and over generated 1 MB and 10 MB scripts, whose times should
// grow linearly. Needs the built package: npm run bench:parser (builds @sqlgate/core first).
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const distParser = path.join(repoRoot, 'packages', 'core', 'dist', 'parser');
if (!fs.existsSync(path.join(distParser, 'index.js'))) {
  console.error('packages/core/dist is missing: run `npm run build -w @sqlgate/core` first.');
  process.exit(1);
}
const { loadParser, parseSql, splitSql } = require(path.join(distParser, 'index.js'));
const { classifyStatement } = require(path.join(distParser, 'classify.js'));

const MB = 1e6;
const utf8Bytes = (texts) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/** Best wall time of `runs` runs, after one warm-up run, in milliseconds. */
function bestTime(runs, fn) {
  fn();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    fn();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

const splitAll = (texts) => () => texts.forEach((text) => splitSql(text));
const parseAll = (texts) => () => texts.forEach((text) => parseSql(text));

function report(label, texts, runs) {
  const bytes = utf8Bytes(texts);
  const split = bestTime(runs, splitAll(texts));
  const parse = bestTime(runs, parseAll(texts));
  const rate = (ms) => (bytes / MB / (ms / 1000)).toFixed(1);
  console.log(
    `${label.padEnd(22)} ${(bytes / MB).toFixed(2).padStart(6)} MB   ` +
      `split+normalise ${rate(split).padStart(6)} MB/s (${split.toFixed(0)} ms)   ` +
      `split+classify ${rate(parse).padStart(6)} MB/s (${parse.toFixed(0)} ms)`,
  );
  return { split, parse };
}

// A deterministic generator of a realistic script: literals with quotes, semicolons and `--`,
// comments of both kinds, dollar-quoted bodies, Unicode, and every statement class.
function generatedScript(targetBytes, seed = 42) {
  let state = seed;
  const random = (n) => {
    // mulberry32: small, and good enough to mix the pieces evenly
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pieces = [
    (k) =>
      `SELECT id, name, 'it''s -- not a comment; really' AS note\nFROM app.accounts_${k % 7} a\nWHERE a.id = ${k} AND a.name LIKE 'x%';\n`,
    () =>
      `-- monthly totals\nSELECT c.region, count(*), sum(o.total) /* gross */\n  FROM orders o JOIN customers c ON c.id = o.customer_id\n WHERE o.created_at >= DATE '2024-01-01'\n GROUP BY c.region ORDER BY 2 DESC;\n`,
    (k) =>
      `INSERT INTO events (kind, payload, note) VALUES ('click', '{"x": ${k}, "y": "a;b"}', E'line\\nbreak ${k}'), ('view', '{}', 'héllo wörld 😀');\n`,
    (k) =>
      `UPDATE inventory SET qty = qty - 1, touched = now() WHERE sku = 'SKU-${k}' RETURNING qty;\n`,
    (k) =>
      `CREATE OR REPLACE FUNCTION f_${k}(x int) RETURNS int LANGUAGE plpgsql AS $body$\nBEGIN\n  -- a comment inside the body; kept\n  RETURN x + ${k};\nEND;\n$body$;\n`,
    () =>
      `WITH recent AS (\n  SELECT * FROM orders WHERE created_at > now() - interval '1 day'\n)\nSELECT customer_id, max(total) FROM recent GROUP BY customer_id;\n`,
    (k) =>
      `SELECT score_${k % 5}(r.value), lower(r.label) FROM readings r WHERE r.sensor = $$sensor;${k}$$;\n`,
    (k) => `DELETE FROM sessions WHERE expires_at < now() - interval '${k % 30} days';\n`,
    () =>
      `/* maintenance\n   /* nested */ block */\nBEGIN;\nSET LOCAL statement_timeout = '5s';\nLOCK TABLE ledger IN SHARE MODE;\nCOMMIT;\n`,
    (k) => `SELECT nextval('order_seq'), pg_advisory_xact_lock(${k});\n`,
    (k) => `EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM big_table WHERE k = ${k};\n`,
    (k) =>
      `SELECT 'first segment'\n'continued segment ${k}' AS joined, "Quoted ""Name""" FROM "MixedCase" FOR UPDATE;\n`,
  ];
  const parts = [];
  let bytes = 0;
  for (let k = 0; bytes < targetBytes; k++) {
    const piece = pieces[random(pieces.length)](k);
    parts.push(piece);
    bytes += Buffer.byteLength(piece);
  }
  return parts.join('');
}

await loadParser();

const corpusDir = path.resolve(repoRoot, '..', 'shared', 'corpus', 'pg-regress');
if (fs.existsSync(corpusDir)) {
  const files = fs
    .readdirSync(corpusDir)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  const texts = files.map((name) => fs.readFileSync(path.join(corpusDir, name), 'utf8'));
  report(`corpus (${files.length} files)`, texts, 5);
  let statements = 0;
  let needingTree = 0;
  for (const text of texts) {
    for (const statement of splitSql(text)) {
      statements++;
      if (classifyStatement(statement).usedTree) needingTree++;
    }
  }
  const share = ((100 * needingTree) / statements).toFixed(1);
  console.log(
    `corpus statements needing the syntax tree to classify: ${needingTree} of ${statements} (${share}%)`,
  );
} else {
  console.log('corpus part skipped: ../shared/corpus/pg-regress is absent');
}

const oneMb = generatedScript(1 * MB);
const tenMb = generatedScript(10 * MB);
const small = report('generated 1 MB', [oneMb], 10);
const large = report('generated 10 MB', [tenMb], 5);
console.log(
  `10 MB / 1 MB time ratio: split+normalise ${(large.split / small.split).toFixed(1)}x, ` +
    `split+classify ${(large.parse / small.parse).toFixed(1)}x (linear is about 10x)`,
);
// The same 10 MB as ten separate 1 MB scripts: a gap to the line above is the cost of one
// request holding ten times as many statements alive (garbage collection), not of the algorithm.
const tenSmall = Array.from({ length: 10 }, () => oneMb);
console.log(
  `ten 1 MB scripts: split+normalise ${bestTime(3, splitAll(tenSmall)).toFixed(0)} ms, ` +
    `split+classify ${bestTime(3, parseAll(tenSmall)).toFixed(0)} ms`,
);
const relationsTime = bestTime(3, () =>
  parseSql(oneMb).forEach((statement) => statement.relations),
);
console.log(
  `generated 1 MB with relations read (parses the tree for every statement): ` +
    `${(Buffer.byteLength(oneMb) / MB / (relationsTime / 1000)).toFixed(1)} MB/s`,
);
