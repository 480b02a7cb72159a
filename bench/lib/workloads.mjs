// The workloads of the HTTP benchmarks (bench/http.mjs, bench/profile.mjs): what each server
// receives, how an answer is checked, and the tables they read and write.

export const BENCH_T_SQL = `SELECT id, name, score, created_at FROM bench_t ORDER BY id`;
const reads = [
  'SELECT id, name FROM bench_t WHERE id < 30',
  'SELECT id, score FROM bench_t WHERE id < 30',
  'SELECT id, created_at FROM bench_t WHERE id < 30',
];
const writes = [
  'INSERT INTO bench_w (v) VALUES (1)',
  'UPDATE bench_w SET v = v + 1 WHERE id = lastval()',
  'INSERT INTO bench_w (v) VALUES (2)',
  'DELETE FROM bench_w WHERE id = lastval()',
  'SELECT id, v FROM bench_w WHERE id = lastval() - 1',
];

/** The fast peer's multi-statement answer: `rows` holds one array of rows per statement. */
const fastResults = (json, count) => Array.isArray(json.rows) && json.rows.length === count;

/**
 * Each workload: what sqlgate, the fast peer and the baseline receive, and a check of one response
 * (run before measuring, so a wrong answer cannot pass for a fast one). The fast peer answers one
 * statement per request; `fastNote` says what it gets instead where a workload has several
 * (`fast: undefined` would skip it).
 */
export const WORKLOADS = [
  {
    id: 'select1',
    label: 'SELECT 1',
    sqlgate: { sql: 'SELECT 1 AS one' },
    fast: { sql: 'SELECT 1 AS one' },
    baseline: { sql: 'SELECT 1 AS one' },
    check: (json) => json.rows?.[0]?.one === 1,
  },
  {
    id: 'rows100',
    label: '100-row × 4-column SELECT',
    sqlgate: { sql: BENCH_T_SQL },
    fast: { sql: BENCH_T_SQL },
    baseline: { sql: BENCH_T_SQL },
    check: (json) => json.rows?.length === 100 && Object.keys(json.rows[0]).length === 4,
  },
  {
    id: 'reads3',
    label: '3 reads in one request',
    sqlgate: { sql: reads.join(';\n') },
    fast: { sql: reads.join(';\n') },
    baseline: { sql: reads.join(';\n') },
    check: (json) => json.results?.length === 3 && json.results.every((r) => r.rows?.length === 29),
    sqlgateCheck: (json) => json.transactionUsed === undefined, // the parallel path
    fastCheck: (json) => fastResults(json, 3) && json.rows.every((rows) => rows.length === 29),
    fastNote: 'closest equivalent: the three reads as one simple query',
  },
  {
    id: 'write5',
    label: '5-statement write transaction',
    sqlgate: { sql: writes.join(';\n') },
    // postgres.js refuses BEGIN on a pool (UNSAFE_TRANSACTION); one simple query holding the five
    // runs them in PostgreSQL's implicit transaction, which is as atomic.
    fast: { sql: writes.join(';\n') },
    baseline: { sql: ['BEGIN', ...writes, 'COMMIT'].join(';\n') },
    check: (json) =>
      Array.isArray(json.results) && json.results.some((r) => r.command === 'DELETE'),
    sqlgateCheck: (json) => json.transactionUsed === true && json.results.length === 5,
    // postgres.js starts a new result at each row description: the four writes share the first.
    fastCheck: (json) => fastResults(json, 2) && json.rows[1].length === 1,
    fastNote:
      'closest equivalent: the five as one simple query (an implicit transaction; postgres.js refuses BEGIN on a pool)',
  },
  {
    id: 'cached',
    label: 'cached read (SELECT 1, cache: true) vs uncached SELECT 1 on the fast peer',
    short: 'cached SELECT 1 (fast peer: uncached)',
    sqlgate: { sql: 'SELECT 1 AS one', cache: true },
    fast: { sql: 'SELECT 1 AS one' },
    baseline: { sql: 'SELECT 1 AS one' },
    check: (json) => json.rows?.[0]?.one === 1,
    sqlgateCheck: (json) => json.cached === true,
    fastNote: 'uncached `SELECT 1 AS one` (it has no cache)',
  },
];

/** The tables the workloads read and write: 100 rows in bench_t, 10 in bench_w. */
export async function prepareBenchTables(client) {
  await client.query(`
    DROP TABLE IF EXISTS bench_t, bench_w;
    CREATE TABLE bench_t (id int PRIMARY KEY, name text NOT NULL, score float8 NOT NULL, created_at timestamptz NOT NULL);
    INSERT INTO bench_t
      SELECT g, 'name ' || g, g * 1.5, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour'
      FROM generate_series(1, 100) g;
    CREATE TABLE bench_w (id bigserial PRIMARY KEY, v int NOT NULL);
    INSERT INTO bench_w (v) SELECT 0 FROM generate_series(1, 10);
    ANALYZE bench_t, bench_w;
  `);
}

/**
 * The body `side` (sqlgate, fast or baseline) receives for `workload` against `target`: the fast
 * peer and the baseline take no sslMode (they connect without TLS).
 */
export function requestBody(workload, side, target) {
  const { sslMode, ...plainTarget } = target;
  return { ...(side === 'sqlgate' ? { ...plainTarget, sslMode } : plainTarget), ...workload[side] };
}
