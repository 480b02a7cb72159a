/**
 * What client-runtimes.test.ts checks of @sqlgate/client's built bundle in every runtime (Bun,
 * Deno, workerd): this module imports nothing, the runtime's entry hands it the bundle, and it
 * answers a report the test asserts on. Each check's outcome is kept, a failure as its error, so
 * that one run shows every check.
 */
/* global setTimeout, AbortController -- in every runtime checked */

/** Polls `condition` until it holds; throws after `attempts` tries (a statement never seen). */
async function until(condition, what, attempts = 400) {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never: ${what}`);
}

/** Values parsed by type OID: int8 as text, timestamptz a Date, json parsed, bytea bytes. */
async function typedValues(sql) {
  const [row] = await sql`SELECT ${41}::int8 + 1 AS big,
    '2026-01-02T03:04:05.678Z'::timestamptz AS at, ${'{"a":[1,null]}'}::json AS doc,
    decode('00ff10', 'hex') AS bytes, ${new Uint8Array([7, 8, 9])} AS sent`;
  return {
    big: row.big,
    atIsDate: row.at instanceof Date,
    at: row.at.toISOString(),
    doc: row.doc,
    bytesAreUint8Array: row.bytes instanceof Uint8Array && row.sent instanceof Uint8Array,
    bytes: [...row.bytes],
    sent: [...row.sent],
  };
}

/** A batch, a begin() that commits, one that throws and rolls back, then the table's rows. */
async function transactions(sql, table) {
  const batch = await sql.transaction([
    sql`INSERT INTO ${table} VALUES (1, 'batch') RETURNING n`,
    sql`INSERT INTO ${table} VALUES (2, 'batch') RETURNING n`,
  ]);
  const committed = await sql.begin(async (tx) => {
    await tx`INSERT INTO ${table} VALUES (3, 'begin')`;
    const [{ count }] = await tx`SELECT count(*)::int AS count FROM ${table}`;
    return count;
  });
  const thrown = await sql
    .begin(async (tx) => {
      await tx`INSERT INTO ${table} VALUES (4, 'rolled back')`;
      throw new Error('changed my mind');
    })
    .then(
      () => 'committed',
      (error) => error.message,
    );
  const rows = await sql`SELECT n, note FROM ${table} ORDER BY n`;
  return { batch, committed, thrown, rows };
}

/** Rows of stream(), taken as they arrive. */
async function streamed(sql, table) {
  const rows = [];
  for await (const row of sql.stream(`SELECT n FROM ${table.text} ORDER BY n`, [], {
    arrayMode: true,
  }))
    rows.push(row);
  return rows;
}

/** An AbortSignal ends a running pg_sleep: the call fails as aborted, PostgreSQL stops it. */
async function aborted(sql, marker) {
  const running = async () => {
    const [{ n }] = await sql.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1",
      [`%${marker}%`],
    );
    return n;
  };
  const controller = new AbortController();
  const sleeping = sql
    .query(`SELECT pg_sleep(60) AS ${marker}`, [], { signal: controller.signal })
    .then(
      () => 'resolved',
      (error) => error,
    );
  await until(async () => (await running()) === 1, 'the pg_sleep running');
  controller.abort();
  const outcome = await sleeping;
  await until(async () => (await running()) === 0, 'the pg_sleep stopped');
  return { name: outcome.name, stoppedInPostgres: true };
}

/** A failing statement's error carries its SQLSTATE and fields. */
async function failures(sql, table) {
  const failing = (query) =>
    query.then(
      () => 'resolved',
      (error) => ({
        name: error.name,
        status: error.status,
        code: error.code,
        constraint: error.constraint,
      }),
    );
  return {
    divisionByZero: await failing(sql`SELECT 1 / ${0}::int AS never`),
    duplicate: await failing(sql`INSERT INTO ${table} VALUES (1, 'again')`),
  };
}

/**
 * Runs every check with `client` (the bundle's exports) against sqlgate at `url`, on `table`, an
 * empty table (n int PRIMARY KEY, note text) of the connection string's database.
 */
export async function runChecks({ client, url, connectionString, table }) {
  const sql = client.sqlgate({ url, connectionString });
  const name = sql.unsafe(table);
  const checks = {
    typedValues: () => typedValues(sql),
    transactions: () => transactions(sql, name),
    streamed: () => streamed(sql, name),
    aborted: () => aborted(sql, `${table}_abort_victim`),
    failures: () => failures(sql, name),
  };
  const report = {};
  for (const [check, run] of Object.entries(checks)) {
    try {
      report[check] = { ok: true, value: await run() };
    } catch (error) {
      report[check] = { ok: false, error: `${error?.name}: ${error?.message}` };
    }
  }
  return report;
}
